"""Parquet and zip extraction, the MIMIC-CXR symlink farm across four roots."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from preprocess import steps
from preprocess.errors import RawDataError
from preprocess.extract.archive import SafeArchive
from preprocess.validate import validate_subset


def _convert(settings, subset, conversion=None):
    return steps.convert(settings, settings.registry(), subset, conversion, 0, 1, None)


def test_pannuke_bytes_names_and_split(settings, demo):
    _convert(settings, "2D_Task/PanNuke")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "PanNuke" / "test_images"
    split = dict(
        line.split(",") for line in (demo / "raw" / "PanNuke" / "PanNuke_split.csv").read_text().splitlines()[1:]
    )
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.png"))
    assert written == sorted(name for name, part in split.items() if part == "test")
    table = pq.read_table(demo / "raw" / "PanNuke" / "data" / "fold2-00000-of-00001.parquet")
    row = table.column("image")[1].as_py()
    tissue = ["Adrenal Gland", "Bile Duct", "Bladder", "Breast", "Cervix", "Colon", "Esophagus", "Head & Neck"][
        table.column("tissue")[1].as_py()
    ]
    assert (root / tissue / "fold2_00000001.png").read_bytes() == row["bytes"]  # not re-encoded


def test_hash_names_write_each_image_once(settings, demo):
    written = _convert(settings, "RadImageNet-VQA")
    table = pq.read_table(demo / "raw" / "RadImageNet-VQA" / "benchmark" / "test-00000-of-00001.parquet")
    images = {row["bytes"] for row in table.column("image").to_pylist()}
    assert len(table) == 18 and len(images) == 2 and len(written) == 2
    root = demo / "DATA_BASEDIR" / "2D_Images" / "RadImageNet-VQA" / "test"
    for data in images:
        assert (root / (hashlib.sha256(data).hexdigest()[:20] + ".png")).read_bytes() == data


def test_rows_without_image_are_skipped_and_counted(settings, demo, capsys):
    written = _convert(settings, "PathVQA")
    assert len(written) == 2
    assert "1 rows have no image and were skipped" in capsys.readouterr().out


def test_medpix_image_column_is_named_image_id(settings, demo):
    assert len(_convert(settings, "MedPIX")) == 3


def test_undecodable_image_and_corrupt_footer_name_the_file(settings, demo):
    path = demo / "raw" / "vqa-rad" / "data" / "test-00000-of-00001-0b1c2d3e4f.parquet"
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    pq.write_table(
        pa.table(
            {"image": pa.array([{"bytes": b"not an image", "path": None}], image), "question": ["?"], "answer": ["!"]}
        ),
        path,
    )
    with pytest.raises(RawDataError, match=r"test-00000-of-00001-0b1c2d3e4f.parquet: row 0 holds bytes that are not"):
        _convert(settings, "VQA-RAD")
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(RawDataError, match=r"0b1c2d3e4f.parquet: not a readable parquet file"):
        _convert(settings, "VQA-RAD")


def test_zip_members_that_escape_are_refused_and_reported(settings, demo, capsys):
    written = _convert(settings, "PMC")
    out = capsys.readouterr().out
    assert "refused member '../evil.jpg'" in out and "climbs out" in out
    assert "refused member '/abs.jpg'" in out and "refused member 'figures/link.jpg'" in out
    assert "1 listed images are in no archive" in out
    assert sorted(Path(row[0]).name for row in written) == ["PMC3298543_F1.jpg", "PMC8253873_Fig2_288.jpg"]
    data_basedir = demo / "DATA_BASEDIR"
    assert not (data_basedir / "2D_Images" / "evil.jpg").exists() and not (data_basedir / "evil.jpg").exists()
    assert not any(p.is_symlink() for p in data_basedir.rglob("*") if "PMC" in str(p))


def test_safe_archive_sets_unsafe_members_aside(tmp_path):
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as archive:
        archive.writestr("ok/a.png", b"x")
        archive.writestr("a/../../b.png", b"x")
        archive.writestr("C:/win.png", b"x")
    safe = SafeArchive(tmp_path / "a.zip")
    assert list(safe.members) == ["ok/a.png"]
    assert set(safe.refused) == {"a/../../b.png", "C:/win.png"}


def test_omnimedvqa_reads_records_and_images_from_the_zip(settings, demo):
    _convert(settings, "OmniMedVQA_vqa")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "OmniMedVQA_vqa" / "test" / "Images" / "ACRIMA"
    assert sorted(os.listdir(root)) == ["Im001_ACRIMA.png", "Im002_ACRIMA.png"]


def test_mimic_symlink_farm_serves_four_roots(settings, demo):
    registry = settings.registry()
    dicom_path = "p10/p10000032/s50414267/02aa804e-bde0afdd-112c0b34-7bc16630-4e384014.jpg"
    # each task file's paths are relative to its own evaluation root: files/ for the VQA and report files, the
    # subset folder (holding files/ and p10..p19) for the others
    for subset, task_file, paths in (
        ("MIMIC-CXR-Report", "MIMIC-CXR_test.json", [dicom_path]),
        ("MIMIC-CXR-T", "mimic-cxr-lt-i2i-test.json", [dicom_path, f"files/{dicom_path}"]),
        ("MIMIC-CXR-VQA", "mimic_test.json", [dicom_path]),
        ("ChestImagrome", "Chest_imagenome_test.json", [dicom_path, f"files/{dicom_path}"]),
    ):
        conversion = "mimic_links" if subset == "ChestImagrome" else None
        _convert(settings, subset, conversion)
        before = {p: os.lstat(p).st_mtime_ns for p in (demo / "DATA_BASEDIR" / "2D_Images").rglob("p1?")}
        _convert(settings, subset, conversion)  # a second run changes nothing
        assert {p: os.lstat(p).st_mtime_ns for p in (demo / "DATA_BASEDIR" / "2D_Images").rglob("p1?")} == before
        folder = demo / "DATA_BASEDIR" / "2D_Task" / subset
        for other in folder.glob("*.json"):
            other.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        record = {"qry_inst": "", "qry_text": "", "qry_img_path": paths[0], "tgt_text": [""]}
        if len(paths) > 1:
            record["tgt_img_path"] = paths[1:]
        (folder / task_file).write_text(json.dumps([record]))
        [report, *_] = validate_subset(registry, registry.subset(subset), demo / "DATA_BASEDIR", settings.raw_root)
        assert report.passed and report.ok == len(paths), subset


GIGABYTE_SCRIPT = """
import sys
from preprocess.config import settings_from_dict
from preprocess import steps
settings = settings_from_dict({"raw_root": sys.argv[1], "data_basedir": sys.argv[2], "subsets": "all",
                               "registry_overrides": sys.argv[3], "verify_checksums": False})
written = steps.convert(settings, settings.registry(), "PathVQA", None, 0, 1, None)
# VmHWM is this program's own peak: ru_maxrss would also count the pytest process it was forked from
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(len(written), peak)
"""


def test_a_gigabyte_parquet_streams_in_bounded_memory(tmp_path):
    """4,096 distinct 256 KiB images (1 GiB) in 64-row groups; peak RSS of the extraction stays under 500 MB."""
    raw = tmp_path / "raw" / "path-vqa" / "data"
    raw.mkdir(parents=True)
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    header = b"\xff\xd8\xff\xe0"  # a JPEG start: written as it is, never decoded
    with pq.ParquetWriter(
        raw / "test-00000-of-00001-big.parquet", pa.schema([("image", image), ("question", pa.string())])
    ) as out:
        for _ in range(64):
            blobs = [header + os.urandom(256 * 1024 - 6) + b"\xff\xd9" for _row in range(64)]
            out.write_table(
                pa.table(
                    {"image": pa.array([{"bytes": b, "path": None} for b in blobs], image), "question": ["?"] * 64}
                )
            )
    assert (raw / "test-00000-of-00001-big.parquet").stat().st_size > 2**30
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(
        "sources:\n  pathvqa:\n    files:\n    - {id: test, glob: 'data/test-*.parquet', min_count: 1}\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", GIGABYTE_SCRIPT, str(tmp_path / "raw"), str(tmp_path / "DATA"), str(overrides)],
        capture_output=True,
        text=True,
        check=True,
    )
    count, peak_kb = (int(v) for v in done.stdout.split()[-2:])
    assert count == 4096
    assert peak_kb * 1024 < 500e6, f"peak RSS {peak_kb / 1024:.0f} MB"
