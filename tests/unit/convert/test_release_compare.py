"""A file already in DATA_BASEDIR with other bytes than this build writes (the release's own image, written by
another encoder) is decoded, compared and kept (issue 41, item 4): the verdicts below are stated by hand."""

from __future__ import annotations

import hashlib
import io
import os

import numpy as np
import pytest
from PIL import Image

from preprocess.convert.outputs import Data, HardLink, Png, write
from preprocess.pipeline import steps

GREY = np.arange(16, dtype=np.uint8).reshape(4, 4) * 10  # 0, 10, ..., 150


def _pillow_png(pixels: np.ndarray, **options) -> bytes:
    """Another encoder than ours: Pillow, at its own compression level."""
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG", compress_level=9, **options)
    return out.getvalue()


@pytest.fixture
def base(tmp_path):
    return tmp_path / "DATA_BASEDIR"


def _place(base, name: str, data: bytes):
    target = base / "2D_Images" / "X" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def _kept(target, data: bytes, verdict: str):
    return (f"2D_Images/X/{target.name}", "kept", f"{len(data)}:{hashlib.sha256(data).hexdigest()} {verdict}")


def test_same_pixels_from_another_encoder_are_kept_byte_for_byte(base):
    release = _pillow_png(GREY)
    target = _place(base, "a.png", release)
    row = write(Png(target, GREY.copy()), base, overwrite=False)
    assert target.read_bytes() == release
    assert row == _kept(target, release, "same pixels")


def test_one_changed_pixel_is_counted_with_its_difference(base):
    changed = GREY.copy()
    changed[2, 3] += 7
    release = _pillow_png(changed)
    target = _place(base, "b.png", release)
    row = write(Png(target, GREY.copy()), base, overwrite=False)
    assert target.read_bytes() == release
    assert row == _kept(target, release, "differs: 1 of 16 pixels, largest difference 7 (4x4 uint8)")


def test_another_shape_or_depth_is_named(base):
    wide = _place(base, "c.png", _pillow_png(np.zeros((4, 5), np.uint8)))
    assert write(Png(wide, GREY.copy()), base, overwrite=False)[2].endswith(
        "differs: in place 4x5 uint8, ours 4x4 uint8"
    )
    deep = _place(base, "d.png", _pillow_png(GREY.astype(np.uint16) * 256))
    assert write(Png(deep, GREY.copy()), base, overwrite=False)[2].endswith(
        "differs: in place 4x4 uint16, ours 4x4 uint8"
    )


def test_a_grey_image_stored_as_rgb_or_16_bit_values_compare_by_value(base):
    rgb = np.repeat(GREY[..., None], 3, axis=2)
    target = _place(base, "e.png", _pillow_png(rgb))
    assert write(Png(target, GREY.copy()), base, overwrite=False)[2].endswith(" same pixels")
    sixteen = (np.arange(16, dtype=np.uint16).reshape(4, 4) * 4000).astype(np.uint16)
    target = _place(base, "f.png", _pillow_png(sixteen))
    assert write(Png(target, sixteen.copy()), base, overwrite=False)[2].endswith(" same pixels")


def test_copied_bytes_of_another_jpeg_encoding_are_compared_decoded(base):
    """A Data output (an upstream JPEG copied as it is) against a release file of the same pixels as PNG."""
    ours = io.BytesIO()
    Image.fromarray(GREY).save(ours, "PNG", compress_level=1)
    target = _place(base, "g.png", _pillow_png(GREY))
    assert write(Data(target, ours.getvalue()), base, overwrite=False)[2].endswith(" same pixels")


def test_overwrite_existing_still_replaces_and_says_so(base, capsys):
    target = _place(base, "h.png", _pillow_png(GREY))
    row = write(Png(target, GREY.copy()), base, overwrite=True)
    assert row[1] == "file" and target.read_bytes() != _pillow_png(GREY)
    assert f"replacing {target}: it held other content (overwrite_existing: true)" in capsys.readouterr().out


def test_the_validation_report_lists_the_kept_files_with_their_verdicts(tmp_path):
    manifest = tmp_path / "m.tsv"
    manifest.write_text(
        "path\tkind\tdetail\n"
        "2D_Images/X/a.png\tfile\t10:" + "0" * 64 + "\n"
        "2D_Images/X/b.png\tkept\t12:" + "1" * 64 + " same pixels\n"
        "2D_Images/X/c.png\tkept\t13:" + "2" * 64 + " differs: 1 of 16 pixels, largest difference 7 (4x4 uint8)\n",
        encoding="utf-8",
    )
    assert steps.kept_files([manifest]) == [
        {"path": "2D_Images/X/b.png", "verdict": "same pixels"},
        {"path": "2D_Images/X/c.png", "verdict": "differs: 1 of 16 pixels, largest difference 7 (4x4 uint8)"},
    ]


def test_a_byte_equal_file_or_a_hard_link_is_the_same_file_untouched(base, tmp_path):
    """A release file that holds our bytes, as a copy or as a hard link to another name, is the same file: a
    plain row, no comparison, neither rewritten nor replaced (inode and mtime kept)."""
    from preprocess.formats.pngio import encode_png

    ours = encode_png(GREY.copy())
    copy = _place(base, "i.png", ours)
    elsewhere = tmp_path / "elsewhere.png"
    elsewhere.write_bytes(ours)
    linked = base / "2D_Images" / "X" / "j.png"
    os.link(elsewhere, linked)
    for target in (copy, linked):
        before = (target.stat().st_ino, target.stat().st_mtime_ns)
        row = write(Png(target, GREY.copy()), base, overwrite=False)
        assert row == (f"2D_Images/X/{target.name}", "file", f"{len(ours)}:{hashlib.sha256(ours).hexdigest()}")
        assert (target.stat().st_ino, target.stat().st_mtime_ns) == before
    assert elsewhere.stat().st_nlink == 2  # the link is kept, not broken by a rewrite


def test_a_raw_file_placed_by_link_over_its_own_link_or_copy_is_the_same_file(base, tmp_path):
    raw = tmp_path / "raw.jpg"
    raw.write_bytes(_pillow_png(GREY))
    linked = base / "2D_Images" / "X" / "k.jpg"
    linked.parent.mkdir(parents=True)
    os.link(raw, linked)
    copy = _place(base, "l.jpg", raw.read_bytes())
    for target in (linked, copy):
        before = (target.stat().st_ino, target.stat().st_mtime_ns)
        row = write(HardLink(target, raw), base, overwrite=False)
        assert row[:2] == (f"2D_Images/X/{target.name}", "file")
        assert (target.stat().st_ino, target.stat().st_mtime_ns) == before


def test_overwrite_existing_names_every_file_it_replaces(base, capsys):
    targets = [_place(base, f"m{i}.png", _pillow_png(GREY + i + 1)) for i in range(3)]
    for target in targets:
        write(Png(target, GREY.copy()), base, overwrite=True)
    said = capsys.readouterr().out.splitlines()
    assert said == [f"replacing {t}: it held other content (overwrite_existing: true)" for t in targets]
