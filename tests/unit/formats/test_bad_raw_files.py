"""The bad-input corpus of raw files: npz archives, DICOMs, parquet files, archive members and names that cannot
be written as they are, a wrong MD5, MedMNIST labels out of range; each case, the exact behaviour, and nothing
written outside the allowed folders."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from badinput import run_case
from preprocess.demo.dicoms import _dicom, xray
from preprocess.demo.volumes import ct_phantom, save_nifti
from preprocess.errors import RawDataError, UnsafePathError
from preprocess.formats.archive import SafeArchive
from preprocess.formats.checksums import ChecksumCache
from preprocess.formats.dicomio import read_dicom
from preprocess.formats.npzio import NpzFile, structure_problems
from preprocess.rawdata.rawcheck import check_source
from preprocess.registry.loader import load_registry
from preprocess.volumes.io import read_volume

SPEC = {"dims": 2, "channels": 1, "labels": 1, "counts": {"train": 2, "val": 1, "test": 2}, "size": 8}


def _npz(path: Path, drop=None, shape=(8, 8)):
    arrays = {}
    for split, n in (("train", 2), ("val", 1), ("test", 2)):
        arrays[f"{split}_images"] = np.zeros((n, *shape), np.uint8)
        arrays[f"{split}_labels"] = np.zeros((n, 1), np.uint8)
    arrays.pop(drop, None)
    np.savez_compressed(path, **arrays)
    return path


def _parquet(path: Path, data: bytes, truncate: bool = False) -> Path:
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    pq.write_table(pa.table({"image": pa.array([{"bytes": data, "path": None}], image)}), path)
    if truncate:
        path.write_bytes(path.read_bytes()[:-30])
    return path


# Each case: (name, action(tmp) -> result, expected). expected is (exception, message regex) or a check.
def case_truncated_nifti(tmp):
    save_nifti(tmp / "a.nii.gz", ct_phantom())
    (tmp / "a.nii.gz").write_bytes((tmp / "a.nii.gz").read_bytes()[:2000])
    return read_volume(tmp / "a.nii.gz")


def case_npz_missing_key(tmp):
    problems = structure_problems(_npz(tmp / "d.npz", drop="val_labels"), SPEC)
    raise RawDataError("; ".join(problems))


def case_npz_wrong_shape(tmp):
    raise RawDataError("; ".join(structure_problems(_npz(tmp / "e.npz", shape=(8, 7)), SPEC)))


def case_npz_truncated(tmp):
    path = _npz(tmp / "f.npz")
    path.write_bytes(path.read_bytes()[:100])
    return NpzFile(path)


def case_wrong_md5(tmp):

    (tmp / "MedMNIST").mkdir()
    (tmp / "MedMNIST" / "bloodmnist.npz").write_bytes(b"not the published file")
    check = check_source(load_registry(variants={"medmnist": "28"}).source("medmnist"), tmp, ChecksumCache(None))
    raise RawDataError(next(f.reason for f in check.files if f.id == "bloodmnist"))


def case_dicom_truncated(tmp):
    _dicom(tmp / "g.dicom", xray(1))
    (tmp / "g.dicom").write_bytes((tmp / "g.dicom").read_bytes()[:-3000])
    return read_dicom(tmp / "g.dicom")


def case_dicom_unsupported_syntax(tmp):
    import pydicom
    from pydicom.encaps import encapsulate

    _dicom(tmp / "h.dicom", xray(2))
    dataset = pydicom.dcmread(tmp / "h.dicom")
    dataset.file_meta.TransferSyntaxUID = "1.2.840.10008.1.2.4.100"
    dataset.PixelData = encapsulate([dataset.PixelData])
    dataset["PixelData"].VR = "OB"
    dataset.save_as(tmp / "h.dicom")
    return read_dicom(tmp / "h.dicom")


def case_parquet_corrupt_footer(tmp):
    from preprocess.formats.parquet import iter_images

    return list(iter_images(_parquet(tmp / "i.parquet", b"\x89PNG", truncate=True), "image"))


def case_parquet_undecodable_image(tmp):
    from types import SimpleNamespace

    from preprocess.convert.parquet_extract import image_bytes

    return image_bytes(SimpleNamespace(data=b"\x00\x01 not an image", file=tmp / "j.parquet", row=0))


def case_archive_escape(tmp):
    with zipfile.ZipFile(tmp / "z.zip", "w") as archive:
        archive.writestr("../evil.png", b"x")
        archive.writestr("/abs.png", b"x")
        archive.writestr("fine/ok.png", b"x")
    safe = SafeArchive(tmp / "z.zip")
    return sorted(safe.members), sorted(safe.refused.items())


def _labels(values, names=8):
    from preprocess.convert.medmnist import label_problems

    return label_problems(np.array(values), [f"class{i}" for i in range(names)])


def case_label_minus_one(tmp):
    return _labels([[0], [-1], [7]])


def case_label_99(tmp):
    return _labels(np.array([[99], [1]], np.uint8))


def case_multilabel_two(tmp):
    return _labels(np.array([[0, 1, 0], [0, 2, 1]], np.uint8), names=3)


def case_float_labels(tmp):
    path = _npz(tmp / "floats.npz")
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive}
    arrays["test_labels"] = arrays["test_labels"].astype(np.float32)
    np.savez_compressed(path, **arrays)
    raise RawDataError("; ".join(structure_problems(path, SPEC)))


def _name(**fields):
    from preprocess.registry.layout import fill

    return fill("images/{image_id}.png", fields, "X/convert: param crop")


def case_name_with_nul(tmp):
    return _name(image_id="ab\0c")


def case_name_300_bytes(tmp):
    return _name(image_id="x" * 300)


def case_name_with_backslash(tmp):
    return _name(image_id="sub\\a")


def case_name_dotdot(tmp):
    return _name(image_id="../../escape")


def case_member_name_too_long(tmp):
    from preprocess.formats.fsutil import safe_relative

    return safe_relative("figures/" + "y" * 256 + ".jpg", "pmc_vqa image name")


def case_parquet_zero_rows_named(tmp):
    from preprocess.convert.parquet_extract import list_rows

    (tmp / "data").mkdir()
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    pq.write_table(pa.table({"image": pa.array([], image)}), tmp / "data" / "Train-0.parquet")
    return list_rows(tmp, ["data/Train-0.parquet"], "2D_Task/ROCO-VQA")


def case_parquet_zero_rows_glob(tmp):
    from preprocess.convert.parquet_extract import list_rows

    (tmp / "data").mkdir()
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    pq.write_table(pa.table({"image": pa.array([], image)}), tmp / "data" / "test-0.parquet")
    _parquet(tmp / "data" / "test-1.parquet", b"\x89PNG")
    lines = []
    return list_rows(tmp, ["data/test-*.parquet"], "2D_Task/VQA-RAD", lines.append), lines


def _zip_member(tmp: Path, stored: bytes) -> dict:
    """A zip with a fine member and one stored under the exact bytes `stored` (a NUL is patched in afterwards:
    zipfile itself would cut the name there); the refused members and their reasons."""
    placeholder = b"P" * len(stored)
    with zipfile.ZipFile(tmp / "m.zip", "w") as archive:
        archive.writestr("figures/ok.jpg", b"x")
        archive.writestr(placeholder.decode(), b"y")
    data = (tmp / "m.zip").read_bytes()
    assert data.count(placeholder) == 2  # the local header and the central directory
    (tmp / "m.zip").write_bytes(data.replace(placeholder, stored))
    safe = SafeArchive(tmp / "m.zip")
    assert list(safe.members) == ["figures/ok.jpg"]
    return safe.refused


def _refused(name: str, reason: str):
    return lambda refused: refused == {name: reason}


CASES = {
    "truncated .nii.gz": (case_truncated_nifti, (RawDataError, r"a.nii.gz: .*truncated")),
    "npz missing a key": (case_npz_missing_key, (RawDataError, r"d.npz: no array 'val_labels'")),
    "npz with wrong shapes": (
        case_npz_wrong_shape,
        (RawDataError, r"e.npz\[train_images\]: shape \(2, 8, 7\), expected \(2, 8, 8\)"),
    ),
    "truncated npz": (case_npz_truncated, (RawDataError, r"f.npz: not a readable .npz archive")),
    "wrong MD5": (case_wrong_md5, (RawDataError, r"checksum differs: bloodmnist.npz md5 \w{32}, expected 7053d0359d")),
    "DICOM with truncated pixel data": (case_dicom_truncated, (RawDataError, r"g.dicom: pixel data cannot be decoded")),
    "DICOM with an unsupported transfer syntax": (
        case_dicom_unsupported_syntax,
        (RawDataError, r"h.dicom: .*transfer syntax"),
    ),
    "parquet with a corrupt footer": (
        case_parquet_corrupt_footer,
        (RawDataError, r"i.parquet: not a readable parquet file"),
    ),
    "parquet with an undecodable image": (
        case_parquet_undecodable_image,
        (RawDataError, r"j.parquet: row 0 holds bytes"),
    ),
    "archive members escaping": (
        case_archive_escape,
        lambda r: r[0] == ["fine/ok.png"] and [m for m, _ in r[1]] == ["../evil.png", "/abs.png"],
    ),
    "MedMNIST label -1": (
        case_label_minus_one,
        lambda r: r == {1: "label [-1] is not a class index 0..7 (8 class names in the registry)"},
    ),
    "MedMNIST label 99": (case_label_99, lambda r: list(r) == [0] and "label [99] is not a class index" in r[0]),
    "multi-label value 2": (case_multilabel_two, lambda r: r == {1: "label [0, 2, 1] is not 0 or 1 (multi-label)"}),
    "float MedMNIST labels": (
        case_float_labels,
        (RawDataError, r"floats.npz\[test_labels\]: dtype float32, expected integer class indices"),
    ),
    "name with a NUL": (case_name_with_nul, (RawDataError, r"X/convert: param crop: the name .* holds a NUL")),
    "name of 300 bytes": (case_name_300_bytes, (RawDataError, r"has a component of 304 bytes \(at most 255\)")),
    "name with a backslash": (case_name_with_backslash, (RawDataError, r"'images/sub\\\\a.png' made .* backslash")),
    "name with ..": (case_name_dotdot, (RawDataError, r"climbs out with '..'")),
    "archive member name too long": (
        case_member_name_too_long,
        (UnsafePathError, r"pmc_vqa image name: .* longer than 255 bytes"),
    ),
    "0-row parquet in a fixed file list": (
        case_parquet_zero_rows_named,
        (RawDataError, r"Train-0.parquet: 0 rows, no image to extract"),
    ),
    "0-row parquet among globbed files": (
        case_parquet_zero_rows_glob,
        lambda r: [Path(f).name for f, _ in r[0]] == ["test-1.parquet"] and "test-0.parquet: 0 rows" in r[1][0],
    ),
    "archive member with a NUL": (
        lambda tmp: _zip_member(tmp, b"figures/a.jpg\0.sh"),
        _refused("figures/a.jpg\0.sh", "holds a NUL character"),
    ),
    "archive member of over 255 bytes": (
        lambda tmp: _zip_member(tmp, b"figures/" + b"y" * 256 + b".jpg"),
        _refused("figures/" + "y" * 256 + ".jpg", "has a component of 260 bytes (at most 255)"),
    ),
    "archive member with ..": (
        lambda tmp: _zip_member(tmp, b"figures/../../a.jpg"),
        _refused("figures/../../a.jpg", "climbs out with '..'"),
    ),
    "archive member with an absolute name": (
        lambda tmp: _zip_member(tmp, b"/etc/a.jpg"),
        _refused("/etc/a.jpg", "absolute path"),
    ),
    "archive member with a backslash": (
        lambda tmp: _zip_member(tmp, b"figures\\a.jpg"),
        _refused("figures\\a.jpg", "holds a backslash (names use '/')"),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_corpus(tmp_path, name):
    run_case(tmp_path, *CASES[name])
