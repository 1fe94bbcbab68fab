"""The bad-input corpus through the CLI: a demo copy with one planted fault, `convert` in-process (and two cases
through `python -m preprocess convert` itself): the exit code, the message naming the file, and nothing
written outside DATA_BASEDIR and the results folder."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from badinput import BLOOD, Planted, _claim_dims, _edit_npz, _nifti_with, _set_label, _tree, _zero_geometry
from conftest import REPO, demo_values


def _edit_csv(path: Path, line: int, old: str, new: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    assert old in lines[line - 1], lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_text("".join(lines))


def _edit_parquet(path: Path, column: str, change) -> None:
    table = pq.read_table(path)
    values = change(table.column(column).to_pylist())
    index = table.schema.get_field_index(column)
    table = table.set_column(index, table.schema.field(index), pa.array(values, table.schema.field(index).type))
    pq.write_table(table, path)


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
    (folder / ".test_images.png.medheb-image_folder-0of1.part").write_bytes(b"half a file")
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
        r"removed 1 temporary files an interrupted run left, e.g. "
        r"\S+/\.test_images\.png\.medheb-image_folder-0of1\.part",
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


@pytest.fixture
def planted(tmp_path, demo_template) -> Planted:
    return Planted(tmp_path, demo_template)
