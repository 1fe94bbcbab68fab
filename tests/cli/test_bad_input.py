"""The bad-input corpus: each case, the exact behaviour, and nothing written outside the allowed folders."""

from __future__ import annotations

import contextlib
import csv
import errno
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from conftest import REPO, demo_config_file, demo_settings, demo_values
from preprocess import cli
from preprocess.checks.rawcheck import check_source
from preprocess.checks.validate import PathChecker, validate_file
from preprocess.convert import boxes
from preprocess.demo.annotations import _dicom, xray
from preprocess.demo.volumes import ct_phantom, save_nifti
from preprocess.errors import RawDataError, UnsafePathError
from preprocess.formats.archive import SafeArchive
from preprocess.formats.checksums import ChecksumCache
from preprocess.formats.dicomio import read_dicom
from preprocess.formats.npzio import NpzFile, structure_problems
from preprocess.pipeline import steps
from preprocess.registry.loader import load_registry
from preprocess.volumes.io import read_volume
from preprocess.volumes.recipes import Profile
from preprocess.volumes.slicer import reference_slices

SPEC = {"dims": 2, "channels": 1, "labels": 1, "counts": {"train": 2, "val": 1, "test": 2}, "size": 8}
MR = Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.015, short="round")


def _npz(path: Path, drop=None, shape=(8, 8)):
    arrays = {}
    for split, n in (("train", 2), ("val", 1), ("test", 2)):
        arrays[f"{split}_images"] = np.zeros((n, *shape), np.uint8)
        arrays[f"{split}_labels"] = np.zeros((n, 1), np.uint8)
    arrays.pop(drop, None)
    np.savez_compressed(path, **arrays)
    return path


def _task(path: Path, records) -> Path:
    path.write_text(records if isinstance(records, str) else json.dumps(records))
    return path


def _record(image):
    return {"qry_text": "", "qry_img_path": image, "tgt_text": [""]}


OK_PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8 + b"\x00\x00\x00\x00IEND\xaeB`\x82"  # passes the quick check


def _validate(tmp: Path, records):
    root = tmp / "DATA" / "2D_Images" / "X"
    root.mkdir(parents=True, exist_ok=True)
    (root / "ok.png").write_bytes(OK_PNG)
    return validate_file(_task(tmp / "t.json", records), PathChecker(root), "X")


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


def case_nifti_corrupt_header(tmp):
    (tmp / "b.nii.gz").write_bytes(gzip.compress(b"\x5c\x01" + b"\xff" * 400))
    return read_volume(tmp / "b.nii.gz")


def case_nrrd_wrong_size(tmp):
    (tmp / "c.nrrd").write_bytes(
        b"NRRD0004\ntype: short\ndimension: 3\nsizes: 9 9 9\nencoding: raw\nendian: little\n\n" + b"\x00" * 30
    )
    return read_volume(tmp / "c.nrrd")


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
    from preprocess.registry.loader import load_registry

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


def case_all_nan_volume(tmp):
    save_nifti(tmp / "k.nii.gz", np.full((6, 6, 6), np.nan, np.float32))
    return reference_slices(read_volume(tmp / "k.nii.gz"), MR)


def case_constant_volume(tmp):
    save_nifti(tmp / "l.nii.gz", np.full((6, 6, 6), 7.0, np.float32))
    return reference_slices(read_volume(tmp / "l.nii.gz"), MR)


def case_empty_mask(tmp):
    return boxes.mask_box(np.zeros((5, 5))), boxes.component_boxes(np.zeros((5, 5)))


def case_box_outside_image(tmp):
    return boxes.reference_crop(180, -40, 260, 10, 200, 100)


def case_csv_with_bom(tmp):
    from preprocess.formats.csvio import read_split_csv

    (tmp / "s.csv").write_bytes("\ufefffolder_name,split\n12,train\n".encode())
    return read_split_csv(tmp / "s.csv", ("folder_name",))


def case_csv_missing_columns(tmp):
    from preprocess.formats.csvio import read_split_csv

    (tmp / "m.csv").write_text("folder,part\n12,train\n")
    return read_split_csv(tmp / "m.csv", ("folder_name",))


def case_nan_coordinates(tmp):
    from preprocess.convert.annotation_crop import read_vindr_cxr

    (tmp / "annotations_test.csv").write_text(
        "image_id,class_name,x_min,y_min,x_max,y_max\na,Nodule/Mass,,,,\na,Nodule/Mass,1,2,30,40\nb,Cardiomegaly,nan,1,2,3\n"
    )
    return read_vindr_cxr([(tmp / "annotations_test.csv", "test")])


def case_json_dotdot(tmp):
    return _validate(tmp, [_record("../../etc/passwd")])


def case_json_absolute(tmp):
    return _validate(tmp, [_record("/etc/passwd")])


def case_json_nested_lists(tmp):
    return _validate(tmp, [{**_record(["ok.png", "ok.png"]), "tgt_img_path": [["ok.png"], "ok.png"]}])


def case_json_wrong_types(tmp):
    return _validate(tmp, [{"qry_text": 5, "qry_img_path": "ok.png", "tgt_text": [""]}])


def case_json_invalid(tmp):
    return _validate(tmp, '[{"qry_text": ')


def case_archive_escape(tmp):
    with zipfile.ZipFile(tmp / "z.zip", "w") as archive:
        archive.writestr("../evil.png", b"x")
        archive.writestr("/abs.png", b"x")
        archive.writestr("fine/ok.png", b"x")
    safe = SafeArchive(tmp / "z.zip")
    return sorted(safe.members), sorted(safe.refused.items())


def case_symlink_out_of_root(tmp):
    (tmp / "outside.png").write_bytes(b"x")
    root = tmp / "DATA" / "2D_Images" / "X"
    root.mkdir(parents=True)
    os.symlink(tmp / "outside.png", root / "link.png")
    return validate_file(_task(tmp / "t.json", [_record("link.png")]), PathChecker(root), "X")


CASES = {
    "truncated .nii.gz": (case_truncated_nifti, (RawDataError, r"a.nii.gz: .*truncated")),
    "NIfTI with a corrupt header": (case_nifti_corrupt_header, (RawDataError, r"b.nii.gz: unreadable NIfTI header")),
    "NRRD with a wrong size": (
        case_nrrd_wrong_size,
        (RawDataError, r"c.nrrd: 30 data bytes, its header promises 1458"),
    ),
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
    "all-NaN volume": (case_all_nan_volume, lambda r: len(r) == 64 and not any(i.any() for _, i in r)),
    "constant volume": (case_constant_volume, lambda r: len(r) == 64 and not any(i.any() for _, i in r)),
    "empty mask": (case_empty_mask, lambda r: r == (None, [])),
    "box outside the image": (case_box_outside_image, lambda r: r == (120, 0, 200, 28)),  # shifted back inside
    "CSV with a BOM": (case_csv_with_bom, lambda r: r == {"12": "train"}),
    "CSV with missing columns": (
        case_csv_missing_columns,
        (RawDataError, r"m.csv: expected columns folder_name and split"),
    ),
    # an empty box is a row without a finding (skipped, as the script does); the text 'nan' is a bad box
    "NaN coordinates": (
        case_nan_coordinates,
        (RawDataError, r"annotations_test.csv line 4: box .* is not four numbers"),
    ),
    "task JSON with ..": (case_json_dotdot, lambda r: r.unsafe == 1 and "climbs out" in r.failures[0].reason),
    "task JSON with an absolute path": (
        case_json_absolute,
        lambda r: r.unsafe == 1 and "absolute" in r.failures[0].reason,
    ),
    "task JSON with nested lists": (case_json_nested_lists, lambda r: r.passed and r.paths == 4),
    "task JSON with wrong types": (
        case_json_wrong_types,
        lambda r: r.bad_records == 1 and "qry_text: expected a string, got int 5" in r.failures[0].reason,
    ),
    "invalid task JSON": (case_json_invalid, lambda r: not r.passed and "invalid JSON" in r.failures[0].reason),
    "archive members escaping": (
        case_archive_escape,
        lambda r: r[0] == ["fine/ok.png"] and [m for m, _ in r[1]] == ["../evil.png", "/abs.png"],
    ),
    "symlink out of the allowed roots": (
        case_symlink_out_of_root,
        lambda r: r.unsafe == 1 and "outside the image root" in r.failures[0].reason,
    ),
}


def test_release_file_with_other_bytes_is_kept_or_replaced_with_a_report(demo, capsys):
    target = demo / "DATA_BASEDIR" / "2D_Images" / "ISIC-2019" / "test" / "ISIC_2019_Test_Input" / "ISIC_0034321.jpg"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"the release's own bytes")
    settings = demo_settings(demo)
    rows = steps.Build(settings).convert(subset="ISIC-2019")
    assert target.read_bytes() == b"the release's own bytes"  # kept, compared (issue 41): not an image at all
    [kept] = [row for row in rows if row[0].endswith("ISIC_0034321.jpg")]
    assert kept[1] == "kept" and kept[2].endswith(" differs: the file in place is not an image Pillow decodes")
    settings = demo_settings(demo, overwrite_existing=True)
    steps.Build(settings).convert(subset="ISIC-2019")
    assert target.read_bytes() != b"the release's own bytes"
    assert f"replacing {target}: it held other content (overwrite_existing: true)" in capsys.readouterr().out


def test_a_second_writer_of_the_same_shard_is_refused(demo):
    import fcntl

    settings = demo_settings(demo)
    lock = demo / "DATA_BASEDIR" / ".medheb-locks" / "2D_Task__APTOS__image_folder.0-of-1.lock"
    lock.parent.mkdir(parents=True)
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # another run holds it
        with pytest.raises(Exception, match=r"another run is building 2D_Task/APTOS/image_folder"):
            steps.Build(settings).convert(subset="APTOS")


def _snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--cores",
        "2",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True)


def test_raw_root_read_only_build_succeeds_and_raw_is_untouched(built_demo):
    """The session's demo build ran with its raw root read-only (conftest.built_demo)."""
    assert "task files resolve every path" in built_demo.build.stderr
    assert built_demo.raw_after == built_demo.raw_before
    print(f"raw root {built_demo.raw_protection}")


@pytest.mark.registry_wide
@pytest.mark.workflow
def test_skip_mode_reports_exactly_the_planted_faults(tmp_path, demo_template):
    workdir = tmp_path / "w"
    workdir.mkdir()
    values = yaml.safe_load((REPO / "config.yaml").read_text())
    values["on_bad_input"] = "skip"
    faulty = {"ct_rate", "vindr_cxr", "kvasir_seg"}  # the sources of the three planted faults
    # every subset that reads them (a clean build of the whole demo is the session's shared one)
    values["subsets"] = [s.key for s in load_registry().subsets if faulty & set(s.source_ids)]
    (workdir / "config.yaml").write_text(yaml.safe_dump(values))
    subprocess.run(["cp", "-a", str(demo_template), str(workdir / "demo")], check=True)
    raw = workdir / "demo" / "raw"
    volume = next((raw / "CT-RATE").rglob("valid_2_b_1.nii.gz"))
    volume.write_bytes(volume.read_bytes()[:3000])  # 1: a truncated CT volume
    dicom = raw / "vindr-cxr" / "test" / "9f8e7d6c5b4a39281706f5e4d3c2b1a0.dicom"
    dicom.write_bytes(dicom.read_bytes()[:-3000])  # 2: a DICOM with its pixel data cut
    kvasir = raw / "Kvasir-SEG" / "images" / "cju0roawvklrq0799vmjorwfv.jpg"
    kvasir.unlink()  # 3: a test image listed in split.csv but absent
    overrides = yaml.safe_load((workdir / "demo" / "registry-overrides.yaml").read_text())
    for source in sorted(faulty):  # the counts now fall one short of the demo's own
        for spec in overrides["sources"][source]["files"]:
            spec.pop("md5", None)
            if "min_count" in spec:
                spec["min_count"] = 1
    (workdir / "demo" / "registry-overrides.yaml").write_text(yaml.safe_dump(overrides))
    done = _snakemake(workdir)
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads((workdir / "results" / "validation" / "summary.json").read_text())
    items = {Path(item["item"]).name: item["times"] for item in summary["skipped_items"]}
    # exactly the three planted items; the CT volume was left out once (its slices and DRR come from one read)
    assert items == {
        "valid_2_b_1.nii.gz": 1,
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0.dicom": 1,
        "cju0roawvklrq0799vmjorwfv": 1,
    }
    assert "3 bad raw items skipped (on_bad_input: skip)" in done.stderr


# --- more cases, function by function ---------------------------------------------------------------------------


def _nifti_with(tmp: Path, name: str, patch) -> Path:
    """A small CT phantom saved as `name`, its 348-byte header changed by patch(nibabel header)."""
    import nibabel as nib

    header = nib.Nifti1Header()
    header.set_data_dtype(np.int16)
    header.set_data_shape((6, 6, 6))
    header.set_sform(np.diag([0.8, 0.8, 2.0, 1.0]), code=1)
    patch(header)
    nib.save(nib.Nifti1Image(np.ones((6, 6, 6), np.int16), None, header=header), tmp / name)
    return tmp / name


def _claim_dims(path: Path, dims=(32767, 32767, 32767)) -> Path:
    """The saved file's header rewritten to claim `dims` voxels (dim[1..3] are int16 at byte 42)."""
    import struct

    packed = path.name.endswith(".gz")
    data = bytearray(gzip.decompress(path.read_bytes()) if packed else path.read_bytes())
    data[42:48] = struct.pack("<3h", *dims)
    path.write_bytes(gzip.compress(bytes(data)) if packed else bytes(data))
    return path


def _zero_geometry(header) -> None:
    header["qform_code"] = 0
    for key in ("srow_x", "srow_y", "srow_z"):
        header[key] = 0


def _nrrd(tmp: Path, name: str, lines: str, data: bytes = b"") -> Path:
    (tmp / name).write_bytes(b"NRRD0004\n" + lines.encode() + b"\n" + data)
    return tmp / name


NRRD_SHORT = "type: short\ndimension: 3\nsizes: 4 4 4\nencoding: raw\nendian: little\n"


def case_nifti_huge_gz(tmp):
    return read_volume(_claim_dims(_nifti_with(tmp, "huge.nii.gz", lambda h: None)))


def case_nifti_huge_uncompressed(tmp):
    return read_volume(_claim_dims(_nifti_with(tmp, "huge.nii", lambda h: None), (600, 600, 600)))


def case_nifti_rgb24(tmp):
    import nibabel as nib

    voxels = np.zeros((4, 4, 4), dtype=[("R", "u1"), ("G", "u1"), ("B", "u1")])
    nib.save(nib.Nifti1Image(voxels, np.eye(4)), tmp / "rgb.nii.gz")
    return read_volume(tmp / "rgb.nii.gz")


def case_nifti_zero_affine(tmp):
    return read_volume(_nifti_with(tmp, "flat.nii.gz", _zero_geometry))


def case_nifti_zero_affine_canonical(tmp):
    from preprocess.volumes.io import read_nifti_canonical

    return read_nifti_canonical(_nifti_with(tmp, "flat2.nii.gz", _zero_geometry))


def case_nifti_short_uncompressed(tmp):
    path = _nifti_with(tmp, "cut.nii", lambda h: None)
    path.write_bytes(path.read_bytes()[:600])
    return read_volume(path)


def case_nifti_cap_from_config(tmp):
    from preprocess.volumes.io import Limits

    return read_volume(_nifti_with(tmp, "small.nii.gz", lambda h: None), Limits(max_voxels=100))


def case_nrrd_unsupported_type(tmp):
    return read_volume(_nrrd(tmp, "block.nrrd", NRRD_SHORT.replace("short", "block")))


def case_nrrd_huge(tmp):
    return read_volume(_nrrd(tmp, "huge.nrrd", NRRD_SHORT.replace("4 4 4", "32767 32767 32767")))


def case_nrrd_data_file_outside(tmp):
    from preprocess.volumes.io import Limits

    (tmp / "raw").mkdir()
    header = NRRD_SHORT + "data file: /etc/passwd\n"
    return read_volume(_nrrd(tmp / "raw", "detached.nrrd", header), Limits(root=tmp / "raw"))


def case_nrrd_data_file_list(tmp):
    return read_volume(_nrrd(tmp, "list.nrrd", NRRD_SHORT + "data file: LIST\n"))


def case_split_csv_latin1(tmp):
    from preprocess.formats.csvio import read_split_csv

    (tmp / "split.csv").write_bytes("split,original_image_path\ntrain,a.png\ntest,caf\xe9.png\n".encode("latin-1"))
    return read_split_csv(tmp / "split.csv", ("original_image_path",))


def case_split_csv_short_row(tmp):
    from preprocess.formats.csvio import read_split_csv

    (tmp / "split.csv").write_text("folder_name,split\n12,train\n13\n")
    return read_split_csv(tmp / "split.csv", ("folder_name",))


VINDR_HEADER = "image_id,class_name,x_min,y_min,x_max,y_max\n"


def _vindr(tmp, rows: str, bad=None):
    from preprocess.convert.annotation_crop import read_vindr_cxr

    (tmp / "annotations_test.csv").write_text(VINDR_HEADER + rows)
    files = [(tmp / "annotations_test.csv", "test")]
    return read_vindr_cxr(files) if bad is None else read_vindr_cxr(files, bad)


def case_vindr_forty(tmp):
    return _vindr(tmp, "a,Nodule/Mass,1,2,30,40\nb,Nodule/Mass,forty,2,30,40\n")


def case_vindr_forty_skipped(tmp):
    seen = []
    groups, _, _ = _vindr(tmp, "a,Nodule/Mass,1,2,30,40\nb,Nodule/Mass,forty,2,30,40\n", lambda i, e: seen.append(i))
    return dict(groups), [Path(s).name for s in seen]


def case_vindr_inverted_box(tmp):
    return _vindr(tmp, "a,Nodule/Mass,30,2,1,40\n")


def case_vindr_short_row(tmp):
    return _vindr(tmp, "a,Nodule/Mass,1,2\n")


def _categories(text: str):
    from preprocess.convert.annotation_crop import finding_categories

    return finding_categories(Path("vindr_detection_v1_folds.csv"), 7, {"finding_categories": text})


def case_categories_without_brackets(tmp):
    return _categories("'Mass'")


def case_categories_not_names(tmp):
    return _categories("['Mass', 3]")


def case_categories_good(tmp):
    return _categories("['Mass', 'Suspicious Calcification']")


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


CASES.update(
    {
        "NIfTI .gz claiming 32767^3 voxels": (
            case_nifti_huge_gz,
            (RawDataError, r"huge.nii.gz: the header claims 32767 x 32767 x 32767 = \d+ voxels, more than max_volume"),
        ),
        "uncompressed NIfTI claiming more voxels than the file": (
            case_nifti_huge_uncompressed,
            (RawDataError, r"huge.nii: \d+ bytes, its header promises 432000352 .*truncated"),
        ),
        "RGB24 NIfTI": (case_nifti_rgb24, (RawDataError, r"rgb.nii.gz: voxel type .*RGB.* is not supported")),
        "all-zero affine": (case_nifti_zero_affine, (RawDataError, r"flat.nii.gz: unusable geometry")),
        "all-zero affine, canonical reader": (
            case_nifti_zero_affine_canonical,
            (RawDataError, r"flat2.nii.gz: unusable geometry"),
        ),
        "uncompressed NIfTI cut short": (
            case_nifti_short_uncompressed,
            (RawDataError, r"cut.nii: 600 bytes, its header promises 784"),
        ),
        "voxel cap from the config": (
            case_nifti_cap_from_config,
            (RawDataError, r"small.nii.gz: .*216 voxels, more than max_volume_voxels \(100\)"),
        ),
        "NRRD of an unsupported type": (case_nrrd_unsupported_type, (RawDataError, r"block.nrrd: voxel type 'block'")),
        "NRRD claiming 32767^3 voxels": (case_nrrd_huge, (RawDataError, r"huge.nrrd: the header claims 32767 x")),
        "NRRD data file outside the raw folder": (
            case_nrrd_data_file_outside,
            (RawDataError, r"detached.nrrd: its 'data file' '/etc/passwd' points outside the raw folder"),
        ),
        "NRRD data file LIST": (case_nrrd_data_file_list, (RawDataError, r"list.nrrd: data in several detached")),
        "Latin-1 split CSV": (case_split_csv_latin1, (RawDataError, r"split.csv line 3: not UTF-8 \(byte 0xe9")),
        "split CSV with a short row": (case_split_csv_short_row, (RawDataError, r"split.csv line 3: 1 cells")),
        "VinDr box 'forty'": (
            case_vindr_forty,
            (RawDataError, r"annotations_test.csv line 3: box \{'x_min': 'forty'.* is not four numbers"),
        ),
        "VinDr box 'forty' skipped alone": (
            case_vindr_forty_skipped,
            lambda r: r == ({("a", "Nodule/Mass"): [(1, 2, 30, 40)]}, ["annotations_test.csv line 3"]),
        ),
        # the scripts accept an inverted box (their 28-pixel window crops it): kept, as read
        # (tests/datasets/test_odd_rows.py)
        "VinDr inverted box": (
            case_vindr_inverted_box,
            lambda r: dict(r[0]) == {("a", "Nodule/Mass"): [(30, 2, 1, 40)]},
        ),
        "VinDr short row": (case_vindr_short_row, (RawDataError, r"annotations_test.csv line 2: box .* not four")),
        "finding_categories without brackets": (
            case_categories_without_brackets,
            (RawDataError, r"vindr_detection_v1_folds.csv line 7: finding_categories \"'Mass'\" is not a list"),
        ),
        "finding_categories with a number": (
            case_categories_not_names,
            (RawDataError, r"vindr_detection_v1_folds.csv line 7: finding_categories .* is not a list of names"),
        ),
        "finding_categories as published": (
            case_categories_good,
            lambda r: r == ["Mass", "Suspicious Calcification"],
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
    }
)


# --- faults of the output side, archive member names, names that break lines, the validator's files ------------


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


def _bmp(width: int, height: int) -> bytes:
    """A 24-bit BMP header claiming width x height pixels, with 16 bytes of pixels (a decompression bomb)."""
    import struct

    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, 0, 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 54 + 16, 0, 0, 54) + info + b"\0" * 16


def case_validate_bomb_bmp(tmp):
    (tmp / "DATA" / "2D_Images" / "X").mkdir(parents=True)
    (tmp / "DATA" / "2D_Images" / "X" / "bomb.bmp").write_bytes(_bmp(40000, 40000))
    return _validate(tmp, [_record("bomb.bmp"), _record("ok.png")])


def case_validate_fifo(tmp):
    (tmp / "DATA" / "2D_Images" / "X").mkdir(parents=True)
    os.mkfifo(tmp / "DATA" / "2D_Images" / "X" / "fifo.png")
    return _validate(tmp, [_record("fifo.png"), _record("ok.png")])


def case_validate_permission_denied(tmp):
    """An image the validator may not open: chmod 000, or (as root, whom chmod does not stop) open refused."""
    from unittest import mock

    folder = tmp / "DATA" / "2D_Images" / "X"
    folder.mkdir(parents=True)
    locked = folder / "locked.png"
    locked.write_bytes(OK_PNG)
    locked.chmod(0)
    real_open = open

    def refuse(path, *args, **kwargs):
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    patch = mock.patch("preprocess.formats.imagecheck.open", refuse, create=True)
    with patch if os.access(locked, os.R_OK) else contextlib.nullcontext():
        return _validate(tmp, [_record("locked.png"), _record("ok.png")])


def case_validate_deep_list(tmp):
    return _validate(tmp, "[" * 100000 + "]" * 100000)


def case_validate_deep_list_in_a_record(tmp):
    return _validate(tmp, '[{"qry_text": "", "qry_img_path": ' + "[" * 100000 + "]" * 100000 + ', "tgt_text": [""]}]')


def case_validate_backslash(tmp):
    (tmp / "DATA" / "2D_Images" / "X" / "sub").mkdir(parents=True)
    (tmp / "DATA" / "2D_Images" / "X" / "sub" / "a.png").write_bytes(OK_PNG)
    return _validate(tmp, [_record("sub\\a.png"), _record("sub/a.png")])


def case_validate_jsonl_u2028(tmp):
    """A Train_Data JSONL record whose path holds U+2028 (JSON writes it raw): still one record, one line."""
    root = tmp / "DATA"
    (root / "img").mkdir(parents=True)
    (root / "img" / "a\u2028b.png").write_bytes(OK_PNG)
    line = json.dumps({"messages": [], "images": ["img/a\u2028b.png"]}, ensure_ascii=False)
    (tmp / "t.jsonl").write_text(line + "\n" + line.replace("a\u2028b", "gone") + "\n")
    return validate_file(tmp / "t.jsonl", PathChecker(root), None, jsonl=True)


CASES.update(
    {
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
        "validate: decompression-bomb BMP": (
            case_validate_bomb_bmp,
            lambda r: (
                (r.unreadable, r.ok, r.failures[0].path) == (1, 1, "bomb.bmp")
                and "possible decompression bomb" in r.failures[0].reason
            ),
        ),
        "validate: a FIFO in place of an image": (
            case_validate_fifo,
            lambda r: (r.unreadable, r.ok, r.failures[0].reason) == (1, 1, "not a regular file"),
        ),
        "validate: an image it may not read": (
            case_validate_permission_denied,
            lambda r: (
                (r.unreadable, r.ok, r.failures[0].path) == (1, 1, "locked.png")
                and r.failures[0].reason == "cannot be read (Permission denied)"
            ),
        ),
        "validate: a 100k-deep list": (
            case_validate_deep_list,
            lambda r: r.bad_records == 1 and "nested too deep to read" in r.failures[0].reason,
        ),
        "validate: a 100k-deep list in a record": (
            case_validate_deep_list_in_a_record,
            lambda r: r.bad_records == 1 and "nested too deep to read" in r.failures[0].reason,
        ),
        "validate: sub\\a.png": (
            case_validate_backslash,
            lambda r: (
                (r.unsafe, r.ok, r.failures[0].path) == (1, 1, "sub\\a.png")
                and "holds a backslash" in r.failures[0].reason
            ),
        ),
        "validate: U+2028 in a JSONL path": (
            case_validate_jsonl_u2028,
            lambda r: (r.records, r.ok, r.missing, r.failures[0].path) == (2, 1, 1, "img/gone.png"),
        ),
    }
)


def _snapshot(base: Path, allowed: tuple[str, ...]) -> dict:
    return {
        str(p.relative_to(base)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in base.rglob("*")
        if p.is_file() and p.relative_to(base).parts[0] not in allowed
    }


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_corpus(tmp_path, name):
    action, expected = CASES[name]
    work = tmp_path / "work"
    work.mkdir()
    results = tmp_path / "results"
    results.mkdir()
    (tmp_path / "bystander.txt").write_text("must not change")
    outside = _snapshot(tmp_path, ("work", "results"))
    if isinstance(expected, tuple):
        with pytest.raises(expected[0], match=expected[1]):
            action(work)
    else:
        assert expected(action(work))
    assert _snapshot(tmp_path, ("work", "results")) == outside


# --- the corpus through the CLI: a demo copy with one planted fault, `convert` in-process -------------------------


def _tree(base: Path, skip: tuple[Path, ...]) -> dict:
    """Every entry under base (but the skipped folders): size, mtime and mode; links by their target."""
    found = {}
    for root, folders, names in os.walk(base):
        folders[:] = [f for f in folders if Path(root, f) not in skip]
        for name in names + folders:
            path = Path(root, name)
            info = path.lstat()
            target = os.readlink(path) if path.is_symlink() else None
            found[str(path.relative_to(base))] = (info.st_size, info.st_mtime_ns, info.st_mode, target)
    return found


class Planted:
    """A demo copy under tmp to plant one fault in (`raw`), then `convert` it through cli.main: the exit code,
    the printed text, and a check that nothing but DATA_BASEDIR and results changed under tmp."""

    def __init__(self, tmp: Path, template: Path):
        self.tmp, self.demo = tmp, tmp / "demo"
        shutil.copytree(template, self.demo, symlinks=True)
        self.raw, self.data = self.demo / "raw", self.demo / "DATA_BASEDIR"
        self.results = tmp / "results"

    def convert(self, subset: str, *extra: str, **config) -> tuple[int, str]:
        values = {**demo_values(self.demo), "verify_checksums": False, **config}
        config_file = self.tmp / "config.json"
        config_file.write_text(json.dumps(values))
        skip = (self.data, self.results)
        before = _tree(self.tmp, skip)
        argv = ["convert", subset, "--config", str(config_file), "--results", str(self.results), *extra]
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = cli.main(argv)
        assert _tree(self.tmp, skip) == before, "something outside DATA_BASEDIR and results changed"
        text = out.getvalue()
        assert "Traceback" not in text, text
        return code, text


@pytest.fixture
def planted(tmp_path, demo_template) -> Planted:
    return Planted(tmp_path, demo_template)


def _edit_csv(path: Path, line: int, old: str, new: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    assert old in lines[line - 1], lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_text("".join(lines))


def _edit_npz(path: Path, key: str, change) -> None:
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive}
    arrays[key] = change(arrays[key])
    np.savez_compressed(path, **arrays)


def _edit_parquet(path: Path, column: str, change) -> None:
    table = pq.read_table(path)
    values = change(table.column(column).to_pylist())
    index = table.schema.get_field_index(column)
    table = table.set_column(index, table.schema.field(index), pa.array(values, table.schema.field(index).type))
    pq.write_table(table, path)


def _set_label(row: int, value, dtype=np.int64):
    def change(labels):
        labels = labels.astype(dtype)
        labels[row] = value
        return labels

    return change


def plant_vindr_forty(p):
    _edit_csv(p.raw / "vindr-cxr/annotations/annotations_test.csv", 2, "20.4", "forty")


def plant_vindr_inverted(p):
    _edit_csv(p.raw / "vindr-cxr/annotations/annotations_test.csv", 2, "20.4,30.9,30.2", "40.4,30.9,30.2")


def plant_vindr_short_row(p):
    _edit_csv(p.raw / "vindr-cxr/annotations/annotations_test.csv", 2, ",30.2,40.7", "")


def _mammo_csv(p) -> Path:
    return p.raw / "vindr-mammo/vindr_detection_v1_folds.csv"


def _mammo_line(p, needle: str) -> int:
    return next(n for n, line in enumerate(_mammo_csv(p).read_text().splitlines(), 1) if needle in line)


def plant_mammo_bare_category(p):
    line = _mammo_line(p, "['Mass']")
    _edit_csv(_mammo_csv(p), line, "\"['Mass']\"", "'Mass'")
    p.line = line


def plant_mammo_forty(p):
    import csv as csvlib

    rows = list(csvlib.DictReader(_mammo_csv(p).open()))
    index = next(i for i, row in enumerate(rows) if row["resized_xmin"].strip())
    rows[index]["resized_xmin"] = "forty"
    with _mammo_csv(p).open("w", newline="") as handle:
        writer = csvlib.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    p.line = index + 2


BLOOD = "MedMNIST/bloodmnist_224.npz"
CHEST = "MedMNIST/chestmnist_224.npz"


def plant_label_minus_one(p):
    _edit_npz(p.raw / BLOOD, "test_labels", _set_label(2, -1))


def plant_label_99(p):
    _edit_npz(p.raw / BLOOD, "test_labels", _set_label(1, 99, np.uint8))


def plant_float_labels(p):
    _edit_npz(p.raw / BLOOD, "test_labels", lambda labels: labels.astype(np.float32))


def plant_multilabel_two(p):
    _edit_npz(p.raw / CHEST, "test_labels", _set_label(0, [2] + [0] * 13, np.uint8))


PANNUKE_FOLD1 = "PanNuke/data/fold1-00000-of-00001.parquet"


def plant_tissue_25(p):
    _edit_parquet(p.raw / PANNUKE_FOLD1, "tissue", lambda values: [25, *values[1:]])


def plant_kvasir_latin1(p):
    path = p.raw / "Kvasir-SEG/split.csv"
    path.write_bytes(path.read_bytes() + "test,caf\xe9.png\n".encode("latin-1"))
    p.line = path.read_bytes().count(b"\n")


def plant_kvasir_short_row(p):
    path = p.raw / "Kvasir-SEG/split.csv"
    path.write_text(path.read_text() + "test\n")
    p.line = path.read_text().count("\n")


def plant_cirrmri_latin1(p):
    path = p.raw / "CirrMRI600+/Cirrhosis_T1_slide_folders.csv"
    path.write_bytes(path.read_bytes() + "caf\xe9,test\n".encode("latin-1"))
    p.line = path.read_bytes().count(b"\n")


ROCO = "ROCO-QA/data/Train-00000-of-00001-91a106d1a22c7cc9.parquet"  # counted by the test split, not written
ROCO_TEST = "ROCO-QA/data/Test-00000-of-00001-91a106d1a22c7cc9.parquet"  # the test split's images


def plant_roco_reused_id(p):
    _edit_parquet(p.raw / ROCO_TEST, "image_id", lambda ids: [ids[0]] * len(ids))


def plant_roco_zero_rows(p):
    table = pq.read_table(p.raw / ROCO)
    pq.write_table(table.slice(0, 0), p.raw / ROCO)


def plant_vqa_rad_zero_rows(p):
    source = next((p.raw / "vqa-rad/data").glob("test-*.parquet"))
    pq.write_table(pq.read_table(source).slice(0, 0), source.with_name("test-00000-of-00002-empty.parquet"))


def _ct_rate_volume(p) -> Path:
    return next((p.raw / "CT-RATE").rglob("valid_2_a_1.nii.gz"))


def plant_ct_huge_header(p):
    _claim_dims(_ct_rate_volume(p))


def plant_ct_rgb24(p):
    import nibabel as nib

    voxels = np.zeros((4, 4, 4), dtype=[("R", "u1"), ("G", "u1"), ("B", "u1")])
    nib.save(nib.Nifti1Image(voxels, np.eye(4)), _ct_rate_volume(p))


def plant_ct_zero_affine(p):
    _nifti_with(_ct_rate_volume(p).parent, _ct_rate_volume(p).name, _zero_geometry)


def _allow_fewer(p, source: str) -> None:
    """The demo's registry overrides with the source's file counts lowered to 1 (a planted fault removes one)."""
    overrides = yaml.safe_load((p.demo / "registry-overrides.yaml").read_text())
    for spec in overrides["sources"][source]["files"]:
        if "min_count" in spec:
            spec["min_count"] = 1
    (p.demo / "registry-overrides.yaml").write_text(yaml.safe_dump(overrides))


def plant_ct_gunzipped(p):
    _allow_fewer(p, "ct_rate")
    volume = _ct_rate_volume(p)
    volume.with_suffix("").write_bytes(gzip.decompress(volume.read_bytes()))
    volume.unlink()


def _hanseg_ct(p) -> Path:
    return next((p.raw / "HaN-Seg").rglob("case_02_IMG_CT.nrrd"))


def _detach(p, value: str) -> None:
    """The CT NRRD's header with its data moved out to `data file: value`."""
    path = _hanseg_ct(p)
    head = path.read_bytes().split(b"\n\n", 1)[0].decode("latin-1")
    path.write_bytes((head + f"\ndata file: {value}\n\n").encode("latin-1"))


def plant_nrrd_etc_passwd(p):
    _detach(p, "/etc/passwd")


def plant_nrrd_outside_file(p):
    outside = p.tmp / "outside-secret.raw"
    outside.write_bytes(b"\x00" * 100000)
    _detach(p, os.path.relpath(outside, _hanseg_ct(p).parent))


def plant_nrrd_symlinked_outside(p):
    outside = p.tmp / "outside-secret.raw"
    outside.write_bytes(b"\x00" * 100000)
    os.symlink(outside, _hanseg_ct(p).parent / "case_02_IMG_CT.raw")
    _detach(p, "case_02_IMG_CT.raw")


def plant_pmc_long_name(p):
    path = p.raw / "PMC-VQA/test.csv"
    path.write_text(path.read_text() + "PMC" + "9" * 300 + ".jpg,What is shown?,CT,CT,MRI,US,X-ray,A\n")


def plant_pmc_backslash_name(p):
    path = p.raw / "PMC-VQA/test.csv"
    path.write_text(path.read_text() + "figs\\PMC1.jpg,What is shown?,CT,CT,MRI,US,X-ray,A\n")


def plant_pmc_nul_name(p):
    path = p.raw / "PMC-VQA/test.csv"
    path.write_text(path.read_text() + "PMC1\0.jpg,What is shown?,CT,CT,MRI,US,X-ray,A\n")


def plant_stale_part(p):
    """A .part file of this job's tag, left by a kill between write and rename; its lock file says done."""
    folder = p.data / "2D_Images/APTOS"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_images.png.image_folder-0of1.part").write_bytes(b"half a file")
    locks = p.data / ".medheb-locks"
    locks.mkdir(parents=True, exist_ok=True)
    (locks / "2D_Task__APTOS__image_folder.0-of-1.lock").write_text("done\n")


def _line(pattern: str):
    """A message pattern with {line}: filled with the line the planting function recorded."""
    return lambda p: pattern.format(line=p.line)


# name: (plant(p), subset, config, exit code, message pattern (str, or p -> str))
CLI_CASES = {
    "VinDr-CXR 'forty'": (
        plant_vindr_forty,
        "2D_Task/VindrCXR",
        {},
        2,
        r"annotations_test.csv line 2: box \{'x_min': 'forty'.* is not four numbers",
    ),
    "VinDr-CXR 'forty', skip": (
        plant_vindr_forty,
        "2D_Task/VindrCXR",
        {"on_bad_input": "skip"},
        0,
        r"skipped \S+annotations_test.csv line 2: .*forty(.|\n)*1 bad items skipped",
    ),
    "VinDr-CXR inverted box": (  # the script's window crops it (tests/datasets/test_odd_rows.py checks the pixels)
        plant_vindr_inverted,
        "2D_Task/VindrCXR",
        {},
        0,
        r"manifest: ",
    ),
    "VinDr-CXR short row": (
        plant_vindr_short_row,
        "2D_Task/VindrCXR",
        {},
        2,
        r"annotations_test.csv line 2: box .*None.* is not four numbers",
    ),
    "VinDr-Mammo 'Mass' without brackets": (
        plant_mammo_bare_category,
        "2D_Task/VindrMammo",
        {},
        2,
        _line(r"vindr_detection_v1_folds.csv line {line}: finding_categories \"'Mass'\" is not a list of names"),
    ),
    "VinDr-Mammo 'Mass' without brackets, skip": (
        plant_mammo_bare_category,
        "2D_Task/VindrMammo",
        {"on_bad_input": "skip"},
        0,
        _line(r"skipped \S+vindr_detection_v1_folds.csv line {line}: (.|\n)*1 bad items skipped"),
    ),
    "VinDr-Mammo 'forty'": (
        plant_mammo_forty,
        "2D_Task/VindrMammo",
        {},
        2,
        _line(r"vindr_detection_v1_folds.csv line {line}: box \{{'resized_xmin': 'forty'"),
    ),
    "MedMNIST label -1": (
        plant_label_minus_one,
        "2D_Task/BloodMNIST",
        {},
        2,
        r"bloodmnist_224.npz\[test_labels\] row 2: label \[-1\] is not a class index 0\.\.7",
    ),
    "MedMNIST label 99": (
        plant_label_99,
        "2D_Task/BloodMNIST",
        {},
        2,
        r"bloodmnist_224.npz\[test_labels\] row 1: label \[99\] is not a class index",
    ),
    "MedMNIST label 99, skip": (
        plant_label_99,
        "2D_Task/BloodMNIST",
        {"on_bad_input": "skip"},
        0,
        r"skipped \S+bloodmnist_224.npz\[test_labels\] row 1: (.|\n)*1 bad items skipped",
    ),
    "MedMNIST float labels": (
        plant_float_labels,
        "2D_Task/BloodMNIST",
        {},
        2,
        r"bloodmnist_224.npz\[test_labels\]: dtype float32, expected integer class indices",
    ),
    "ChestMNIST label 2": (
        plant_multilabel_two,
        "2D_Task/ChestMNIST",
        {},
        2,
        r"chestmnist_224.npz\[test_labels\] row 0: label \[2, 0, .*\] is not 0 or 1",
    ),
    "PanNuke tissue 25": (  # the script warns and skips the row: logged and counted, not a stop
        plant_tissue_25,
        "2D_Task/PanNuke",
        {},
        0,
        r"1 rows have no tissue in 0\.\.18 and were skipped, .*fold1-00000-of-00001.parquet row 0 \(tissue 25\)",
    ),
    "Kvasir split.csv in Latin-1": (
        plant_kvasir_latin1,
        "2D_Task/Gastrointestinal",
        {},
        2,
        _line(r"Kvasir-SEG/split.csv line {line}: not UTF-8 \(byte 0xe9"),
    ),
    "Kvasir split.csv with a short row": (
        plant_kvasir_short_row,
        "2D_Task/Gastrointestinal",
        {},
        2,
        _line(r"Kvasir-SEG/split.csv line {line}: 1 cells, the header has 2"),
    ),
    "CirrMRI600 split CSV in Latin-1": (
        plant_cirrmri_latin1,
        "3D_Task/ChirrMRI600",
        {},
        2,
        _line(r"Cirrhosis_T1_slide_folders.csv line {line}: not UTF-8"),
    ),
    "ROCO ids reused with other bytes": (
        plant_roco_reused_id,
        "2D_Task/ROCO-VQA",
        {},
        0,
        r"2 rows reuse an image_id with other bytes .*Test-00000-of-00001-91a106d1a22c7cc9.parquet row 1: image_id",
    ),
    "ROCO 0-row parquet": (
        plant_roco_zero_rows,
        "2D_Task/ROCO-VQA",
        {},
        2,
        r"Train-00000-of-00001-91a106d1a22c7cc9.parquet: 0 rows, no image to extract",
    ),
    "VQA-RAD 0-row parquet": (
        plant_vqa_rad_zero_rows,
        "2D_Task/VQA-RAD",
        {},
        0,
        r"test-00000-of-00002-empty.parquet: 0 rows, no image to extract; download it again \(left out\)",
    ),
    "CT-RATE header of 32767^3 voxels": (
        plant_ct_huge_header,
        "3D_Task/CT_RATE",
        {},
        2,
        r"valid_2_a_1.nii.gz: the header claims 32767 x 32767 x 32767",
    ),
    "CT-RATE header of 32767^3 voxels, skip": (
        plant_ct_huge_header,
        "3D_Task/CT_RATE",
        {"on_bad_input": "skip"},
        0,
        r"skipped \S+valid_2_a_1.nii.gz: \S+ the header claims",
    ),
    "CT-RATE RGB24 volume": (
        plant_ct_rgb24,
        "3D_Task/CT_RATE",
        {},
        2,
        r"valid_2_a_1.nii.gz: voxel type .*RGB.* is not supported",
    ),
    "CT-RATE all-zero affine": (
        plant_ct_zero_affine,
        "3D_Task/CT_RATE",
        {},
        2,
        r"valid_2_a_1.nii.gz: unusable geometry",
    ),
    "CT-RATE all-zero affine, canonical": (
        plant_ct_zero_affine,
        "3D_Task/CT_RATE",
        {"orientation": "canonical"},
        2,
        r"valid_2_a_1.nii.gz: unusable geometry",
    ),
    "CT-RATE .nii for .nii.gz": (
        plant_ct_gunzipped,
        "3D_Task/CT_RATE",
        {},
        0,
        r"3D_Task/CT_RATE: 1 .nii files left out, the ct_rate recipe reads .nii.gz .*valid_2_a_1.nii\b",
    ),
    "NRRD data file /etc/passwd": (
        plant_nrrd_etc_passwd,
        "3D_Task/HaN-Seg",
        {},
        2,
        r"case_02_IMG_CT.nrrd: its 'data file' '/etc/passwd' points outside the raw folder .*nothing was read",
    ),
    "NRRD data file climbing out": (
        plant_nrrd_outside_file,
        "3D_Task/HaN-Seg",
        {},
        2,
        r"case_02_IMG_CT.nrrd: its 'data file' '(\.\./)+outside-secret.raw' points outside the raw folder",
    ),
    "NRRD data file a symlink out": (
        plant_nrrd_symlinked_outside,
        "3D_Task/HaN-Seg",
        {},
        2,
        r"case_02_IMG_CT.nrrd: its 'data file' 'case_02_IMG_CT.raw' points outside .*outside-secret.raw\)",
    ),
    "PMC-VQA name of 300 characters": (
        plant_pmc_long_name,
        "2D_Task/PMC",
        {},
        2,
        r"pmc_vqa image name: path 'PMC9999.* has a component longer than 255 bytes",
    ),
    "PMC-VQA name with a backslash": (
        plant_pmc_backslash_name,
        "2D_Task/PMC",
        {},
        2,
        r"pmc_vqa image name: path 'figs\\\\PMC1.jpg' holds a backslash",
    ),
    "PMC-VQA name with a NUL, skip": (
        plant_pmc_nul_name,
        "2D_Task/PMC",
        {"on_bad_input": "skip"},
        0,
        r"skipped PMC1\x00\.jpg: pmc_vqa image name: .* holds a backslash or NUL(.|\n)*1 bad items skipped",
    ),
    "stale .part of a finished run": (
        plant_stale_part,
        "2D_Task/APTOS",
        {},
        0,
        r"removed 1 temporary files an interrupted run left, e.g. \S+test_images.png.image_folder-0of1.part",
    ),
}


def plant_pmc_latin1(p):
    path = p.raw / "PMC-VQA/test.csv"
    path.write_bytes(path.read_bytes() + "caf\xe9.jpg,What is shown?,CT,CT,MRI,US,X-ray,A\n".encode("latin-1"))


CLI_CASES["PMC-VQA test.csv in Latin-1"] = (
    plant_pmc_latin1,
    "2D_Task/PMC",
    {},
    2,
    r"PMC-VQA/test.csv: not a readable UTF-8 CSV \('utf-8' codec can't decode byte 0xe9",
)


def _pmc_member_named(stored: bytes):
    """PMC-VQA's images.zip with the listed figure PMC3298543_F1.jpg stored under the exact bytes `stored` (the
    archive rewritten with a placeholder name of that length, then patched: zipfile would cut a NUL)."""

    def plant(p):
        path = p.raw / "PMC-VQA/images.zip"
        placeholder = "P" * len(stored)
        with zipfile.ZipFile(path) as old:
            members = [(info, old.read(info)) for info in old.infolist()]
        with zipfile.ZipFile(path, "w") as new:
            for info, data in members:
                if info.filename == "figures/PMC3298543_F1.jpg":
                    info = zipfile.ZipInfo(placeholder, info.date_time)
                new.writestr(info, data)
        data = path.read_bytes()
        assert data.count(placeholder.encode()) == 2  # its local header and the central directory
        path.write_bytes(data.replace(placeholder.encode(), stored))

    return plant


CLI_CASES.update(
    {
        "PMC-VQA member with a backslash": (
            _pmc_member_named(b"figures\\PMC3298543_F1.jpg"),
            "2D_Task/PMC",
            {},
            2,
            r"images.zip: member 'figures\\\\PMC3298543_F1.jpg' \(the image PMC3298543_F1.jpg\) is never extracted: "
            r"its name holds a backslash",
        ),
        "PMC-VQA member with a NUL, skip": (
            _pmc_member_named(b"figures/PMC3298543_F1.jpg\0.exe"),
            "2D_Task/PMC",
            {"on_bad_input": "skip"},
            0,
            r"refused member 'figures/PMC3298543_F1.jpg\\x00.exe' of \S+images.zip: holds a NUL character(.|\n)*"
            r"skipped PMC3298543_F1.jpg: \S+images.zip: member .* holds a NUL(.|\n)*1 bad items skipped",
        ),
    }
)


@pytest.mark.parametrize("name", list(CLI_CASES))
def test_bad_input_through_the_cli(planted, name, monkeypatch):
    plant, subset, config, code, pattern = CLI_CASES[name]
    plant(planted)
    if "NRRD" in name:  # nothing may be read from the data file: the header check refuses it before SimpleITK
        import SimpleITK

        real = SimpleITK.ReadImage

        def read_image(path, *args):
            assert "case_02_IMG_CT" not in str(path), "SimpleITK read the NRRD whose data file lies outside"
            return real(path, *args)

        monkeypatch.setattr(SimpleITK, "ReadImage", read_image)
    exit_code, text = planted.convert(subset, **config)
    assert exit_code == code, text[-3000:]
    assert re.search(pattern if isinstance(pattern, str) else pattern(planted), text), text[-3000:]


def test_the_terminal_shows_no_traceback(planted):
    """Two corpus cases through `python -m preprocess convert` itself: one line naming the file, exit 2."""
    plant_vindr_forty(planted)
    plant_label_minus_one(planted)
    config = planted.tmp / "config.json"
    config.write_text(json.dumps({**demo_values(planted.demo), "verify_checksums": False}))
    before = _tree(planted.tmp, (planted.data, planted.results))
    for subset, message in (
        ("2D_Task/VindrCXR", "annotations_test.csv line 2: box"),
        ("2D_Task/BloodMNIST", "bloodmnist_224.npz[test_labels] row 2: label [-1]"),
    ):
        argv = ["convert", subset, "--config", str(config), "--results", str(planted.results)]
        done = subprocess.run([sys.executable, "-m", "preprocess", *argv], capture_output=True, text=True, cwd=REPO)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stdout + done.stderr
    assert _tree(planted.tmp, (planted.data, planted.results)) == before


def test_an_unexpected_error_is_one_line(monkeypatch, capsys):
    def broken(args):
        raise KeyError("image_id")

    monkeypatch.setattr(cli, "cmd_list", broken)
    monkeypatch.delenv("MEDHEB_TRACEBACK", raising=False)
    parser = cli.build_parser("python -m preprocess")
    monkeypatch.setattr(cli, "build_parser", lambda prog: _with_func(parser, "list", broken))
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unexpected KeyError: 'image_id'; please report it") and "Traceback" not in err


def _with_func(parser, command: str, func):
    parser._subparsers._group_actions[0].choices[command].set_defaults(func=func)
    return parser


class _Smk:
    """What Snakemake hands a script: rule, wildcards, log, config (only what run() reads)."""

    def __init__(self, rule: str, log: Path, config: dict):
        self.rule, self.log, self.config = rule, [str(log)], config
        self.wildcards = {"group": "2D_Task", "folder": "APTOS"}


def test_a_rule_error_goes_to_its_log_and_one_line_to_the_terminal(tmp_path, demo, monkeypatch):
    from preprocess.pipeline import snakemake_entry

    def broken(smk, build):
        print("converting 2D_Task/APTOS")
        raise ValueError("cannot reshape array of size 0")

    monkeypatch.setitem(snakemake_entry.STEPS, "convert", broken)
    terminal = io.StringIO()
    monkeypatch.setattr(sys, "__stderr__", terminal)
    log = tmp_path / "logs" / "convert.log"
    with pytest.raises(SystemExit) as stop:
        snakemake_entry.run(_Smk("convert", log, demo_values(demo)))
    assert stop.value.code == 1
    text = log.read_text()
    assert "converting 2D_Task/APTOS" in text and "Traceback" in text and "ValueError: cannot reshape" in text
    assert text.rstrip().endswith("the traceback is in the log: please report it with the log)")
    line = terminal.getvalue()
    assert f"error in rule convert (log {log}): unexpected ValueError: cannot reshape array of size 0" in line
    assert "group=2D_Task, folder=APTOS" in line and "Traceback" not in line


def test_a_rule_bad_input_message_goes_to_its_log_and_the_terminal(tmp_path, demo, monkeypatch):
    from preprocess.pipeline import snakemake_entry

    def bad(smk, build):
        raise RawDataError("/raw/x.csv line 4: box is not four numbers")

    monkeypatch.setitem(snakemake_entry.STEPS, "convert", bad)
    terminal = io.StringIO()
    monkeypatch.setattr(sys, "__stderr__", terminal)
    log = tmp_path / "convert.log"
    with pytest.raises(SystemExit):
        snakemake_entry.run(_Smk("convert", log, demo_values(demo)))
    assert log.read_text() == "error: /raw/x.csv line 4: box is not four numbers\n"
    assert f"error in rule convert (log {log}): /raw/x.csv line 4" in terminal.getvalue()


def test_status_lists_part_files_left_under_data_basedir(tmp_path, demo, capsys, outside_checkout):
    left = demo / "DATA_BASEDIR" / "2D_Images" / "APTOS" / "a.png.image_folder-0of1.part"
    left.parent.mkdir(parents=True, exist_ok=True)
    left.write_bytes(b"half")
    config = str(demo_config_file(demo, tmp_path / "demo.json"))
    cli.main(["status", str(demo / "DATA_BASEDIR"), "--config", config, "--results", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert (
        f"1 temporary .part files left by interrupted runs (rerunning their conversion removes them):\n  {left}" in out
    )
    cli.main(["status", str(demo / "DATA_BASEDIR"), "--config", config, "--json", "--results", str(tmp_path / "r")])
    assert json.loads(capsys.readouterr().out)["part_files"] == [str(left)]


# --- the output side: a full disk, a read-only DATA_BASEDIR, a kill between write and rename ---------------------


class _FullDisk:
    """The writer's `os` with os.write failing ENOSPC after `allowed` writes (a disk that fills up mid-job)."""

    def __init__(self, allowed: int):
        self.allowed, self.refused = allowed, 0

    def __getattr__(self, name):
        return getattr(os, name)

    def write(self, descriptor, data):
        if self.allowed == 0:
            self.refused += 1
            raise OSError(errno.ENOSPC, "No space left on device")
        self.allowed -= 1
        return os.write(descriptor, data)


def _contents(base: Path) -> dict:
    """Every file and link under base (but the lock folder) by its bytes' digest or its target."""
    found = {}
    for path in sorted(base.rglob("*")):
        relative = str(path.relative_to(base))
        if relative.startswith(".medheb-locks") or (path.is_dir() and not path.is_symlink()):
            continue
        found[relative] = os.readlink(path) if path.is_symlink() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def test_a_full_disk_stops_the_job_naming_the_output_and_a_rerun_resumes_to_the_same_tree(planted, monkeypatch):
    from preprocess.convert import outputs

    disk = _FullDisk(allowed=3)
    monkeypatch.setattr(outputs, "os", disk)
    code, text = planted.convert("2D_Task/BloodMNIST")
    assert code == 2 and disk.refused == 1, text
    assert re.search(
        r"error: cannot write \S+/DATA_BASEDIR/2D_Images/BloodMNIST/\S+\.png \(No space left on device\); the disk "
        r"holding DATA_BASEDIR is full: free space there, then run again \(finished files are kept\)",
        text,
    ), text
    images = planted.data / "2D_Images" / "BloodMNIST"
    assert len([p for p in images.rglob("*") if p.is_file()]) == 3  # the three writes before the disk filled
    assert not list(planted.data.rglob("*.part"))
    monkeypatch.setattr(outputs, "os", os)  # space freed
    code, text = planted.convert("2D_Task/BloodMNIST")
    assert code == 0, text
    resumed = _contents(planted.data)
    manifest = next((planted.results / "convert").rglob("*.tsv")).read_bytes()
    shutil.rmtree(images)
    assert planted.convert("2D_Task/BloodMNIST")[0] == 0  # a fresh build of the same subset
    assert resumed == _contents(planted.data)
    assert next((planted.results / "convert").rglob("*.tsv")).read_bytes() == manifest


def _can_write(folder: Path) -> bool:
    try:
        (folder / ".probe").write_text("")
    except OSError:
        return False
    (folder / ".probe").unlink()
    return True


_READ_ONLY_MOUNT = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'


def _convert_read_only(p: Planted, folder: Path, subset: str, **values) -> tuple[int, str]:
    """`convert` with `folder` read-only: chmod 0555, and where that does not stop writes (root), the folder
    mounted read-only in a private mount namespace around `python -m preprocess convert`."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o555)
    try:
        if not _can_write(folder):
            return p.convert(subset, **values)
        if subprocess.run(["unshare", "-m", "sh", "-c", _READ_ONLY_MOUNT, str(folder), "true"]).returncode:
            pytest.skip("running as root without a private mount namespace: no way to make a folder read-only")
        config = p.tmp / "config.json"
        config.write_text(json.dumps({**demo_values(p.demo), "verify_checksums": False, **values}))
        before = _tree(p.tmp, (p.data, p.results))
        argv = [sys.executable, "-m", "preprocess", "convert", subset, "--config", str(config)]
        command = ["unshare", "-m", "sh", "-c", _READ_ONLY_MOUNT, str(folder), *argv, "--results", str(p.results)]
        done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
        assert _tree(p.tmp, (p.data, p.results)) == before, "something outside DATA_BASEDIR and results changed"
        assert "Traceback" not in done.stdout + done.stderr, done.stderr
        return done.returncode, done.stdout + done.stderr
    finally:
        folder.chmod(0o755)


def test_a_read_only_data_basedir_is_refused_before_anything_is_written(planted):
    before = _tree(planted.data, ())
    code, text = _convert_read_only(planted, planted.data, "2D_Task/APTOS")
    assert code == 2, text
    assert re.search(
        rf"error: DATA_BASEDIR {re.escape(str(planted.data))} is not writable \((Permission denied|Read-only file "
        r"system)\): the built images go there; fix its permissions or choose another folder",
        text,
    ), text
    assert _tree(planted.data, ()) == before


def test_a_read_only_folder_of_data_basedir_stops_the_job_naming_the_output(planted):
    """A folder of the tree made read-only (a restored backup, say): the first output there stops the job, even
    with on_bad_input: skip (no raw item is at fault: skipping would drop them all)."""
    folder = planted.data / "2D_Images" / "APTOS" / "train_images"
    code, text = _convert_read_only(planted, folder, "2D_Task/APTOS", on_bad_input="skip")
    assert code == 2, text
    assert re.search(
        rf"error: cannot write {re.escape(str(folder))}/\w+\.png \((Permission denied|Read-only file system)\); "
        r"DATA_BASEDIR \(or this folder of it\) is read-only: make it writable, then run again",
        text,
    ), text
    assert os.listdir(folder) == [] and "skipped" not in text


def test_a_kill_between_write_and_rename_leaves_a_part_the_next_run_removes(planted, tmp_path, outside_checkout):
    """A real SIGKILL of `python -m preprocess convert` at its second rename; the rerun removes the .part and
    status lists none; a .part of no job of ours (another tool's, or another shard's) stays listed."""
    config = planted.tmp / "config.json"
    config.write_text(json.dumps({**demo_values(planted.demo), "verify_checksums": False}))
    killer = (
        "import os, signal, sys\n"
        "from preprocess import cli\n"
        "real, seen = os.replace, []\n"
        "def replace(src, dst):\n"
        "    seen.append(dst)\n"
        "    if len(seen) == 2:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(src, dst)\n"
        "os.replace = replace\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )
    argv = ["convert", "2D_Task/APTOS", "--config", str(config), "--results", str(planted.results)]
    done = subprocess.run([sys.executable, "-c", killer, *argv], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == -9, done.stderr
    images = planted.data / "2D_Images" / "APTOS" / "train_images"
    left = [p.name for p in images.iterdir() if p.name.endswith(".part")]
    assert len(left) == 1 and left[0].endswith(".image_folder-0of1.part"), os.listdir(images)
    code, text = planted.convert("2D_Task/APTOS")
    assert code == 0 and f"removed 1 temporary files an interrupted run left, e.g. {images / left[0]}" in text, text
    assert not list(planted.data.rglob("*.part"))
    status = ["status", str(planted.data), "--config", str(config), "--json", "--results", str(planted.results)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(status)
    assert json.loads(out.getvalue())["part_files"] == []
    foreign = planted.data / "2D_Images" / "ISIC-2019" / ".ISIC_0034321.jpg.image_folder-1of2.part"
    foreign.parent.mkdir(parents=True)
    foreign.write_bytes(b"half")
    assert planted.convert("2D_Task/APTOS")[0] == 0 and foreign.exists()  # not APTOS's: left alone
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(status)
    assert json.loads(out.getvalue())["part_files"] == [str(foreign)]


def test_names_with_a_newline_or_u2028_keep_the_manifest_and_the_later_steps_whole(planted, tmp_path):
    """A raw folder name holding a newline and a file name holding U+2028 (Brain-Tumor-MRI's image folder): the
    manifest keeps one row per file, and the contact-sheet and validation steps read it."""
    testing = planted.raw / "brain-tumor-mri-dataset" / "Testing"
    odd = testing / "glio\nma" / "Te-gl\u2028_0099.jpg"
    odd.parent.mkdir()
    shutil.copyfile(testing / "glioma" / "Te-gl_0010.jpg", odd)
    code, text = planted.convert("2D_Task/Brain-Tumor-MRI")
    assert code == 0, text
    manifest = planted.results / "convert" / "2D_Task" / "Brain-Tumor-MRI" / "image_folder.0-of-1.tsv"
    with open(manifest, encoding="utf-8", newline="") as handle:  # any TSV reader, quoted fields and all
        rows = [tuple(row) for row in csv.reader(handle, dialect="excel-tab")][1:]
    expected = "2D_Images/Brain-Tumor-MRI/datasets/Testing/glio\nma/Te-gl\u2028_0099.jpg"
    assert [row[0] for row in rows if "glio\n" in row[0]] == [expected] and len(rows) == 6
    assert all(len(row) == 3 and row[1] == "file" for row in rows)
    build = steps.Build(demo_settings(planted.demo), results=planted.results)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        build.contact_sheet(manifests=[manifest], out=tmp_path / "sheet.png")
        found = build.validate(subset="2D_Task/Brain-Tumor-MRI", report_out=tmp_path / "v.json", manifests=[manifest])
    assert "6 of 6 images on the sheet" in out.getvalue() and (tmp_path / "sheet.png").stat().st_size > 0
    assert found and all(report.passed for report in found)
    assert json.loads((tmp_path / "v.json").read_text())["skipped_items"] == []


def test_validate_reports_each_bad_file_as_a_row_and_finishes_the_table(planted):
    """`python -m preprocess validate` on a built APTOS whose task file also names a decompression-bomb BMP, a
    FIFO, a folder and `sub\\\\a.png`, beside a 100k-deep task JSON: one row each, every other row still checked,
    exit 1, no traceback."""
    assert planted.convert("2D_Task/APTOS")[0] == 0
    root = planted.data / "2D_Images" / "APTOS" / "train_images"
    (root / "bomb.bmp").write_bytes(_bmp(40000, 40000))
    os.mkfifo(root / "fifo.png")
    (root / "folder.png").mkdir()
    (root / "sub").mkdir()
    shutil.copyfile(root / "000c1434d8d7.png", root / "sub" / "a.png")
    task = planted.data / "2D_Task" / "APTOS" / "APTOS_test.json"
    records = json.loads(task.read_text())
    good = len(records)
    records += [{**records[0], "qry_img_path": name} for name in ("bomb.bmp", "fifo.png", "folder.png", "sub\\a.png")]
    task.write_text(json.dumps(records))
    (task.parent / "deep.json").write_text("[" * 100000 + "]" * 100000)
    config = planted.tmp / "config.json"
    config.write_text(json.dumps(demo_values(planted.demo)))
    argv = ["validate", str(planted.data), "--subset", "2D_Task/APTOS", "--config", str(config)]
    done = subprocess.run([sys.executable, "-m", "preprocess", *argv], capture_output=True, text=True, cwd=REPO)
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in out, out
    shown = "2D_Task/APTOS/APTOS_test.json"
    for row in (
        rf"{shown}: record {good}, qry_img_path: unreadable: 'bomb.bmp' refused: .*decompression bomb",
        rf"{shown}: record {good + 1}, qry_img_path: unreadable: 'fifo.png' not a regular file",
        rf"{shown}: record {good + 2}, qry_img_path: unreadable: 'folder.png' not a regular file",
        rf"{shown}: record {good + 3}, qry_img_path: unsafe: 'sub\\\\a.png' image path: .* holds a backslash",
        r"2D_Task/APTOS/deep.json: file, <file>: bad_record: '' cannot read task file: .*nested too deep",
    ):
        assert re.search(row, out), (row, out)
    assert re.search(rf"{shown}\s+{good + 4}\s+0\s+{good + 4}\s+{good}\s+0\s+3\s+1", out), out  # the table row


@pytest.mark.workflow
def test_a_real_snakemake_run_with_a_bad_input_names_the_rule_log(tmp_path, demo_template):
    """`snakemake --cores 1` for BloodMNIST alone, its MedMNIST archive holding a label -1: the convert rule's log
    holds the message, the terminal its line naming the log and a closing hint naming that log, no traceback."""
    workdir = tmp_path / "w"
    workdir.mkdir()
    values = yaml.safe_load((REPO / "config.yaml").read_text())
    values.update(subsets=["2D_Task/BloodMNIST"], verify_checksums=False)
    (workdir / "config.yaml").write_text(yaml.safe_dump(values))
    subprocess.run(["cp", "-a", str(demo_template), str(workdir / "demo")], check=True)
    _edit_npz(workdir / "demo" / "raw" / BLOOD, "test_labels", _set_label(2, -1))
    raw = _tree(workdir / "demo" / "raw", ())
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    done = subprocess.run([*command, "--cores", "1"], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr[-4000:]
    log = "logs/convert/2D_Task/BloodMNIST/npz_unpack_2d.0-of-1.log"
    message = "bloodmnist_224.npz[test_labels] row 2: label [-1] is not a class index 0..7"
    text = (workdir / log).read_text()
    assert text.startswith("2D_Task/BloodMNIST/npz_unpack_2d shard 1/1:") and f"error: {workdir}/demo/raw/" in text
    assert text.rstrip().endswith(f"{message} (8 class names in the registry); the archive is not the published one, "
                                  "download it again")  # fmt: skip
    assert f"error in rule convert (log {log}): {workdir}/demo/raw/MedMNIST/{message}" in done.stderr
    assert f"\nA step failed (log: {log}): its error line above" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (workdir / "results" / "convert" / "2D_Task" / "BloodMNIST" / "npz_unpack_2d.0-of-1.tsv").exists()
    assert _tree(workdir / "demo" / "raw", ()) == raw
