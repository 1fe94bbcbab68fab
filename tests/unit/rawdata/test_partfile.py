"""A download's temporary file (rawdata/partfile.py, issue 53 case 10): only a part a download of ours
started, by its record, is resumed or emptied; a listing that is no tree is refused (case 13)."""

from __future__ import annotations

import pytest

from preprocess.errors import RawDataError, UnsafePathError
from preprocess.pipeline.status import _conversion_part
from preprocess.rawdata.partfile import check_listing, claim_of, open_part, part_of


def test_a_leftover_of_ours_resumes_and_of_another_address_starts_over(tmp_path):
    target = tmp_path / "x.npz"
    part = part_of(target)
    assert part.name == ".x.npz.medheb-download.part" and claim_of(part).name == ".x.npz.medheb-download.claim"
    with open_part(part, tmp_path, "http://a/x", target) as handle:
        handle.write(b"abc")
    with open_part(part, tmp_path, "http://a/x", target) as handle:
        assert handle.tell() == 3  # appended to: the next GET asks from byte 3 on
    with open_part(part, tmp_path, "http://b/x", target) as handle:
        assert handle.tell() == 0 and part.read_bytes() == b""  # another file's start: emptied, ours to empty


def test_a_part_whose_record_is_not_its_own_is_refused_and_kept(tmp_path):
    target = tmp_path / "x.npz"
    part = part_of(target)
    with open_part(part, tmp_path, "http://a/x", target) as handle:
        handle.write(b"abc")
    part.rename(tmp_path / "ours")  # kept: the file system does not give its inode to the next file
    part.write_bytes(b"someone else's")  # another file under the recorded name
    refused = pytest.raises(UnsafePathError, match=rf"^{part} is not a download this pipeline started")
    with refused:
        open_part(part, tmp_path, "http://a/x", target)
    claim_of(part).unlink()
    claim_of(part).symlink_to(tmp_path / "elsewhere")  # a record that is a link is none
    with refused:
        open_part(part, tmp_path, "http://a/x", target)
    assert part.read_bytes() == b"someone else's" and not (tmp_path / "elsewhere").exists()


def test_a_listing_that_is_no_tree_or_names_our_temporaries_is_refused():
    check_listing("o/r", "c", ["a/b.json", "a/b.json.part", "a/c/d.json"])  # a user's old-style name is a file
    with pytest.raises(RawDataError, match=r"^o/r \(commit c\) lists a/c both as a file and as the folder of a/c/d"):
        check_listing("o/r", "c", ["a/c", "a/c/d.json"])
    for name in ("a/.b.json.medheb-download.part", "a/.b.json.medheb-download.claim", "a/.p.medheb-x-0of1.part"):
        with pytest.raises(RawDataError, match=rf"lists {name}, a name this pipeline keeps for its own temporary"):
            check_listing("o/r", "c", ["a/b.json", name])


def test_status_lists_a_conversions_temporaries_not_a_downloads():
    assert _conversion_part(".a.png.medheb-image_folder-0of1.part")
    assert not _conversion_part(".a.png.medheb-download.part") and not _conversion_part("a.png.part")
