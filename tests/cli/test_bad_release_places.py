"""Issue 53: what stands at an image's place in DATA_BASEDIR when `convert` rebuilds over it (a file of the
release, a user's file), and where the build's own copies go.

APTOS's conversion places each upstream image under the name its task JSONs give (REFERENCE.md, image
folders): `2D_Images/APTOS/train_images/<id_code>.png`, the raw `aptos2019-blindness-detection/train_images`
file's bytes. The names below are the demo's literal APTOS ids."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from badinput import Planted
from conftest import demo_values
from preprocess import cli

IMAGE = "2D_Images/APTOS/train_images/000c1434d8d7.png"
RAW = "aptos2019-blindness-detection/train_images/000c1434d8d7.png"


@pytest.fixture
def planted(tmp_path, demo_template) -> Planted:
    return Planted(tmp_path, demo_template)


def _other_pixels(planted: Planted) -> bytes:
    """The raw image with its first pixel changed, at the image's place: a release file that differs."""
    pixels = np.array(Image.open(planted.raw / RAW))
    pixels.flat[0] ^= 0x40
    target = planted.data / IMAGE
    target.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(target, "PNG")
    return target.read_bytes()


def _png_declaring(width: int, height: int) -> bytes:
    """A PNG of a few dozen bytes whose header declares width x height pixels (a decompression bomb)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def _manifest_rows(path: Path) -> dict[str, tuple[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return {line.split("\t")[0]: tuple(line.split("\t")[1:]) for line in lines}


def test_a_manifest_named_deep_or_shallow_keeps_this_builds_file_under_the_results_folder(planted, monkeypatch):
    """Case 1: the copy of a file that differs goes to <results>/compared/<path>, wherever --manifest is."""
    release = _other_pixels(planted)
    deep = planted.results / "a" / "b" / "c" / "m.tsv"
    code, text = planted.convert("2D_Task/APTOS", "--manifest", str(deep), build="all")
    assert code == 0, text
    assert (planted.results / "compared" / IMAGE).read_bytes() == (planted.raw / RAW).read_bytes()
    assert not (planted.results / "a" / "compared").exists() and not (planted.tmp / "compared").exists()
    assert (planted.data / IMAGE).read_bytes() == release  # the release's file, never replaced
    assert _manifest_rows(deep)[IMAGE][0] == "kept"
    # Case 3: a manifest named with no folder above it (the old code counted three and raised IndexError)
    (planted.results / "compared" / IMAGE).unlink()
    monkeypatch.chdir(planted.results)
    code, text = planted.convert("2D_Task/APTOS", "--manifest", "m.tsv", build="all")
    assert code == 0 and "IndexError" not in text, text
    assert (planted.results / "compared" / IMAGE).read_bytes() == (planted.raw / RAW).read_bytes()
    assert _manifest_rows(planted.results / "m.tsv")[IMAGE][0] == "kept"


def test_a_second_convert_with_a_shallow_manifest_meets_the_lock(planted, monkeypatch):
    """Case 3: a convert whose --manifest is `m.tsv` reaches the lock that refuses a second writer."""
    lock = planted.data / ".medheb-locks" / "2D_Task__APTOS__image_folder.0-of-1.lock"
    lock.parent.mkdir(parents=True)
    monkeypatch.chdir(planted.results.parent)
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # the first run holds it
        code, text = planted.convert("2D_Task/APTOS", "--manifest", "m.tsv")
    assert code == 2, text
    assert f"another run is building 2D_Task/APTOS/image_folder in {planted.data} (lock {lock})" in text


def test_only_the_jobs_own_temporary_files_are_removed(planted):
    """Case 2: a user's file named like a temporary of this job, a link or a folder of the job's very name,
    another job's temporary: all kept; the job's own leftover: removed, and said."""
    folder = planted.data / "2D_Images" / "APTOS" / "train_images"
    folder.mkdir(parents=True)
    users = [folder / "notes.image_folder-0of1.part", folder / ".notes.image_folder-0of1.part"]
    for path in users:
        path.write_bytes(b"a user's notes")
    (folder / ".a.png.medheb-image_folder-0of1.part").symlink_to(planted.raw / RAW)
    (folder / ".b.png.medheb-image_folder-0of1.part").mkdir()
    other_job = folder / ".c.png.medheb-image_folder-1of2.part"
    other_job.write_bytes(b"half")
    own = folder / ".d.png.medheb-image_folder-0of1.part"
    own.write_bytes(b"half")
    code, text = planted.convert("2D_Task/APTOS")
    assert code == 0, text
    assert f"removed 1 temporary files an interrupted run left, e.g. {own}" in text
    assert not own.exists()
    assert all(path.read_bytes() == b"a user's notes" for path in users)
    assert (folder / ".a.png.medheb-image_folder-0of1.part").is_symlink()
    assert (folder / ".b.png.medheb-image_folder-0of1.part").is_dir() and other_job.read_bytes() == b"half"


@pytest.mark.parametrize("skip", [False, True])
def test_a_bomb_at_a_release_images_place_is_the_release_files_row_not_the_raw_items(planted, skip):
    """Case 4: a 60000x60000 PNG of a few dozen bytes where the image goes. It is compared, kept and reported
    as the file in place; the raw item is good and is never skipped (on_bad_input: skip or not)."""
    bomb = _png_declaring(60000, 60000)
    target = planted.data / IMAGE
    target.parent.mkdir(parents=True)
    target.write_bytes(bomb)
    manifest = planted.results / "m.tsv"
    extra = {"on_bad_input": "skip"} if skip else {}
    code, text = planted.convert("2D_Task/APTOS", "--manifest", str(manifest), build="all", **extra)
    assert code == 0, text
    assert "DecompressionBombError" not in text and "skipped" not in text and "damaged" not in text
    rows = _manifest_rows(manifest)
    kind, detail = rows[IMAGE]
    verdict = (
        "differs: the file in place declares more pixels than the decoder's limit, a possible decompression "
        "bomb: not decoded"
    )
    assert kind == "kept" and detail.endswith(f" {verdict}")
    assert not [path for path, (kind, _) in rows.items() if kind == "problem"]
    assert target.read_bytes() == bomb
    assert (planted.results / "compared" / IMAGE).read_bytes() == (planted.raw / RAW).read_bytes()


def test_the_validation_names_a_bomb_by_its_declared_size(planted):
    """The validation's quick check reads a PNG's header: the bomb is unreadable, by the size it declares."""
    target = planted.data / IMAGE
    target.parent.mkdir(parents=True)
    target.write_bytes(_png_declaring(60000, 60000))
    config = planted.tmp / "config.json"
    config.write_text(json.dumps(demo_values(planted.demo)))
    out = io.StringIO()
    argv = ["validate", str(planted.data), "--config", str(config), "--results", str(planted.results)]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main(argv)
    assert code == 1
    said = (
        "unreadable: '000c1434d8d7.png' refused: its header declares 60000x60000 pixels, more pixels than the "
        "decoder's limit, a possible decompression bomb: not decoded"
    )
    assert said in out.getvalue()


@pytest.mark.parametrize("kind", ["fifo", "folder", "link out", "loop"])
def test_something_not_a_file_at_an_images_place_is_kept_named_and_the_job_goes_on(planted, kind):
    """Cases 5 and 11: a FIFO, a folder, a link to a file outside the tree or a link loop where an image
    goes. The job finishes every other image; the row says what stands there; nothing is read through it."""
    target = planted.data / IMAGE
    target.parent.mkdir(parents=True)
    outside = planted.tmp / "outside.txt"
    outside.write_text("not the tree's")
    what = {
        "fifo": "a FIFO (named pipe)",
        "folder": "a folder",
        "link out": f"a symbolic link to {outside}",
        "loop": f"a symbolic link to {target}",
    }[kind]
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    else:
        target.symlink_to(outside if kind == "link out" else target)
    manifest = planted.results / "m.tsv"
    code, text = planted.convert("2D_Task/APTOS", "--manifest", str(manifest), build="all")
    assert code == 0, text
    rows = _manifest_rows(manifest)
    assert rows[IMAGE] == ("kept", f"- differs: {what} in its place, not a file: kept as it is, nothing read from it")
    written = [path for path, (row_kind, _) in rows.items() if row_kind == "file"]
    raw_images = sorted(p.name for p in (planted.raw / RAW).parent.iterdir())
    assert len(written) > 1 and all(Path(path).name in raw_images for path in written)
    assert outside.read_text() == "not the tree's"
    assert (planted.results / "compared" / IMAGE).read_bytes() == (planted.raw / RAW).read_bytes()
