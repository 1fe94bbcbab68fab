"""The one writer of output bytes keeps a file that already holds them, refuses other content unless told,
and leaves no temporary file."""

from __future__ import annotations

import hashlib
import os

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


def test_other_content_is_refused_and_kept_unless_overwrite(base, capsys):
    target = base / "2D_Images/X/1.png"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"someone else's file")
    with pytest.raises(OutputConflictError, match=r"1.png already exists with other content; .*overwrite_existing"):
        write_bytes(target, PNG, base, overwrite=False)
    assert target.read_bytes() == b"someone else's file"
    assert not _leftovers(base)
    write_bytes(target, PNG, base, overwrite=True)
    assert target.read_bytes() == PNG
    assert f"replacing {target}: it held other content" in capsys.readouterr().out
    assert not _leftovers(base)


def test_a_folder_where_the_file_belongs_is_refused(base):
    target = base / "2D_Images/X/1.png"
    target.mkdir(parents=True)
    with pytest.raises(OutputConflictError, match="already exists with other content"):
        write_bytes(target, PNG, base, overwrite=False)
    assert target.is_dir() and not _leftovers(base)
