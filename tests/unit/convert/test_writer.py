"""The one writer of output bytes keeps a file that already holds them, keeps (and compares) a file with
other bytes unless told to replace it, keeps a folder, a link or a FIFO in its place unread and reports it as
that output's row (the job goes on), and leaves no temporary file."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from preprocess.convert.outputs import write_bytes
from preprocess.errors import OutputConflictError

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))


@pytest.fixture
def base(tmp_path):
    return tmp_path / "DATA_BASEDIR"


def _leftovers(folder):
    return [name for _, _, names in os.walk(folder) for name in names if name.endswith(".part")]


def test_a_new_file_gets_its_bytes_and_its_manifest_row(base):
    row = write_bytes(base / "2D_Images/X/a/1.png", PNG, base, overwrite=False)
    assert (base / "2D_Images/X/a/1.png").read_bytes() == PNG
    assert row == ("2D_Images/X/a/1.png", "file", f"{len(PNG)}:{hashlib.sha256(PNG).hexdigest()}")
    assert not _leftovers(base)


def test_a_file_holding_the_same_bytes_is_kept_as_it_is(base):
    target = base / "2D_Images/X/1.png"
    target.parent.mkdir(parents=True)
    target.write_bytes(PNG)
    os.utime(target, (1_000_000, 1_000_000))
    before = os.stat(target)
    write_bytes(target, PNG, base, overwrite=False)
    after = os.stat(target)
    assert (after.st_ino, after.st_mtime) == (before.st_ino, 1_000_000)  # not written again
    assert not _leftovers(base)


def test_other_content_is_kept_and_compared_unless_overwrite(base, capsys):
    target = base / "2D_Images/X/1.png"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"someone else's file")
    row = write_bytes(target, PNG, base, overwrite=False)
    assert target.read_bytes() == b"someone else's file"
    theirs = "19:" + hashlib.sha256(b"someone else's file").hexdigest()  # the file in place, 19 bytes
    verdict = "differs: other bytes, and this build's file is not an image to compare by pixels"
    assert row == ("2D_Images/X/1.png", "kept", f"{theirs} {verdict}")
    assert not _leftovers(base)
    write_bytes(target, PNG, base, overwrite=True)
    assert target.read_bytes() == PNG
    assert f"replacing {target}: it held other content" in capsys.readouterr().out
    assert not _leftovers(base)


def test_a_folder_where_the_file_belongs_is_kept_and_reported_even_under_overwrite(base, capsys):
    target = base / "2D_Images/X/1.png"
    (target / "inside").mkdir(parents=True)
    row = write_bytes(target, PNG, base, overwrite=False)
    verdict = "differs: a folder in its place, not a file: kept as it is, nothing read from it"
    assert row == ("2D_Images/X/1.png", "kept", f"- {verdict}")
    row = write_bytes(target, PNG, base, overwrite=True)  # replacing it would lose what it holds (issue 53, 12)
    verdict = "differs: a folder in its place, which overwrite_existing never replaces: move it away"
    assert row == ("2D_Images/X/1.png", "kept", f"- {verdict}")
    assert (target / "inside").is_dir() and not _leftovers(base)
    assert "check the disk" not in capsys.readouterr().out


def test_a_fifo_or_socket_in_place_is_named_as_such_never_opened(base):
    import socket

    folder = base / "2D_Images/X"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "1.png")  # an open for reading would wait on it forever
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "2.png"))
    try:
        rows = [write_bytes(folder / name, PNG, base, overwrite=False) for name in ("1.png", "2.png")]
    finally:
        listener.close()
    tail = "in its place, not a file: kept as it is, nothing read from it"
    assert rows == [
        ("2D_Images/X/1.png", "kept", f"- differs: a FIFO (named pipe) {tail}"),
        ("2D_Images/X/2.png", "kept", f"- differs: a socket {tail}"),
    ]
    assert not _leftovers(base)


def test_a_file_where_a_folder_belongs_stops_the_job_naming_it(base):
    (base / "2D_Images").mkdir(parents=True)
    (base / "2D_Images/X").write_bytes(b"a user's file")
    message = (
        f"{base}/2D_Images/X is a regular file where a folder of this build belongs ({base}/2D_Images/X/a); "
        "the pipeline never removes it: move it away, then run again"
    )
    with pytest.raises(OutputConflictError, match=f"^{re.escape(message)}$"):
        write_bytes(base / "2D_Images/X/a/1.png", PNG, base, overwrite=False)
    assert (base / "2D_Images/X").read_bytes() == b"a user's file"


# --- nothing is written through a folder link out of DATA_BASEDIR (issue 36, item 2) -----------------------------


def _state(folder):
    """Every entry under folder, links not followed: bytes of files, targets of links."""
    found = {}
    for root, folders, names in os.walk(folder):
        for name in folders + names:
            path = os.path.join(root, name)
            if os.path.islink(path):
                found[path] = ("link", os.readlink(path))
            elif os.path.isfile(path):
                found[path] = ("file", Path(path).read_bytes())
            else:
                found[path] = ("folder",)
    return found


@pytest.fixture
def outside(tmp_path):
    """A folder outside DATA_BASEDIR holding one file (a raw download, say)."""
    folder = tmp_path / "raw" / "source"
    folder.mkdir(parents=True)
    (folder / "kept.jpg").write_bytes(b"raw bytes")
    return folder


def _link(base, relative, target):
    link = base / relative
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=True)
    return link


@pytest.mark.parametrize("relative", ["2D_Images/X", "2D_Images/X/test_images/liver"])
def test_no_bytes_are_written_through_a_folder_link_out_of_data_basedir(base, outside, relative):
    link = _link(base, relative, outside)
    before = _state(outside)
    with pytest.raises(OutputConflictError, match=rf"^{link} is a link to {outside}, outside DATA_BASEDIR .*rm {link}"):
        write_bytes(base / relative / "sub" / "1.png", PNG, base, overwrite=False)
    with pytest.raises(OutputConflictError, match=rf"^{link} is a link to {outside}"):
        write_bytes(base / relative / "kept.jpg", b"raw bytes", base, overwrite=True)  # the same bytes: still no
    assert _state(outside) == before


def test_no_raw_file_is_hard_linked_or_copied_through_a_folder_link(base, outside, tmp_path):
    from preprocess.convert.outputs import HardLink, place_file

    link = _link(base, "2D_Images/X/train", outside)
    source = tmp_path / "raw" / "other.jpg"
    source.write_bytes(b"another raw file")
    before = _state(tmp_path / "raw")
    with pytest.raises(OutputConflictError, match=rf"^{link} is a link to {outside}"):
        place_file(HardLink(base / "2D_Images/X/train/a/other.jpg", source), base, overwrite=False)
    assert _state(tmp_path / "raw") == before


def test_a_link_farm_may_link_out_but_nothing_is_written_through_its_links(base, outside):
    from preprocess.convert.outputs import SymLink, place_symlink

    row = place_symlink(SymLink(base / "2D_Images/MIMIC/files", outside), base)
    assert row == ("2D_Images/MIMIC/files", "symlink", str(outside))
    before = _state(outside)
    link = base / "2D_Images/MIMIC/files"
    with pytest.raises(OutputConflictError, match=rf"^{link} is a link to {outside}"):
        write_bytes(base / "2D_Images/MIMIC/files/p10/1.png", PNG, base, overwrite=False)
    with pytest.raises(OutputConflictError, match=rf"^{link} is a link to {outside}"):
        place_symlink(SymLink(base / "2D_Images/MIMIC/files/p11", outside), base)
    assert _state(outside) == before


def test_a_link_at_an_output_name_is_kept_unread_and_replaced_never_written_through(base, outside, capsys):
    target = base / "2D_Images/X/kept.jpg"
    target.parent.mkdir(parents=True)
    target.symlink_to(outside / "kept.jpg")
    before = _state(outside)
    row = write_bytes(target, b"raw bytes", base, overwrite=False)  # even with the bytes the link leads to
    verdict = f"differs: a symbolic link to {outside / 'kept.jpg'} in its place, not a file: kept as it is"
    assert row == ("2D_Images/X/kept.jpg", "kept", f"- {verdict}, nothing read from it")
    assert target.is_symlink()
    write_bytes(target, PNG, base, overwrite=True)
    said = f"replacing {target}: it held a symbolic link to {outside / 'kept.jpg'} (overwrite_existing: true)"
    assert said in capsys.readouterr().out
    assert not target.is_symlink() and target.read_bytes() == PNG
    assert _state(outside) == before


def test_links_that_stay_inside_data_basedir_are_followed(base):
    (base / "elsewhere").mkdir(parents=True)
    _link(base, "2D_Images/X", base / "elsewhere")
    write_bytes(base / "2D_Images/X/a/1.png", PNG, base, overwrite=False)
    assert (base / "elsewhere/a/1.png").read_bytes() == PNG


def test_data_basedir_itself_may_be_a_link(tmp_path):
    real = tmp_path / "disk" / "tree"
    real.mkdir(parents=True)
    (tmp_path / "DATA_BASEDIR").symlink_to(real, target_is_directory=True)
    write_bytes(tmp_path / "DATA_BASEDIR/2D_Images/X/1.png", PNG, tmp_path / "DATA_BASEDIR", overwrite=False)
    assert (real / "2D_Images/X/1.png").read_bytes() == PNG


@pytest.fixture(params=["renameat2", "look first"])
def rename_kind(request, monkeypatch):
    """The writer with renameat2(RENAME_NOREPLACE), and as on a system without it (it then looks first)."""
    from preprocess.formats import noreplace

    if request.param == "look first":
        monkeypatch.setitem(noreplace._STATE, "renameat2", None)
    elif not noreplace.available():
        pytest.skip("this system has no renameat2")
    answers = []  # what each rename without replacing answered: True (moved) or False (the name is taken)
    rename = noreplace.rename
    monkeypatch.setattr(
        noreplace, "rename", lambda source, target: answers.append(rename(source, target)) or answers[-1]
    )
    return answers


def test_in_a_folder_this_job_made_a_name_taken_since_is_never_written_over(base, outside, rename_kind, capsys):
    """The first write makes the folder (nothing is looked at there after); what appears in it afterwards, by
    someone else, is kept (a file with other bytes compared, a link left unread), as in a folder met full."""
    folder = base / "2D_Images/X/a"
    write_bytes(folder / "1.png", PNG, base, overwrite=False)
    (folder / "2.png").write_bytes(b"someone else's file")
    (folder / "3.png").symlink_to(outside / "theirs.png")
    (outside / "theirs.png").write_bytes(b"not ours")
    assert write_bytes(folder / "2.png", PNG, base, overwrite=False)[1] == "kept"
    assert write_bytes(folder / "3.png", PNG, base, overwrite=False)[1] == "kept"
    assert write_bytes(folder / "4.png", PNG, base, overwrite=False)[1] == "file"
    assert (folder / "2.png").read_bytes() == b"someone else's file"
    assert (folder / "3.png").is_symlink() and (outside / "theirs.png").read_bytes() == b"not ours"
    assert [(folder / name).read_bytes() for name in ("1.png", "4.png")] == [PNG, PNG]
    assert not _leftovers(base)
    assert rename_kind in ([], [True, False, False, True])  # without renameat2 none; with it, 2 and 3 taken
