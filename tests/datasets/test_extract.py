"""Parquet and zip extraction, the MIMIC-CXR symlink farm across four roots."""

from __future__ import annotations

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
from PIL import Image

from conftest import demo_settings
from preprocess.errors import PreprocessError, RawDataError
from preprocess.formats.archive import SafeArchive
from preprocess.pipeline import steps
from preprocess.verify.validate import validate_subset


def _convert(settings, subset, conversion=None, registry=None):
    return steps.Build(settings, registry or settings.registry()).convert(subset=subset, conversion=conversion)


def _pixels(path_or_bytes) -> tuple[str, np.ndarray]:
    with Image.open(io.BytesIO(path_or_bytes) if isinstance(path_or_bytes, bytes) else path_or_bytes) as image:
        image.load()
        return image.mode, np.array(image)


def _reference_decode(data: bytes) -> tuple[str, np.ndarray]:
    """The benchmark's PanNuke rule: Pillow decodes; a mode Pillow's PNG writer does not keep becomes RGB."""
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        if image.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
            image = image.convert("RGB")
        return image.mode, np.array(image)


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


PANNUKE_WRITTEN = {  # name under 2D_Images/PanNuke -> (fold file, row)
    "test_images/Breast/fold1_00000000.png": (1, 0),
    "test_images/Cervix/fold1_00000001.png": (1, 1),
    "train_images/Colon/fold1_00000002.png": (1, 2),
    "test_images/Esophagus/fold2_00000000.png": (2, 0),
    "test_images/Head and Neck/fold2_00000001.png": (2, 1),
    "test_images/Bile Duct/fold3_00000000.png": (3, 0),  # listed unpadded in the split CSV: Bile Duct/fold3_0.png
    "train_images/Bladder/fold3_00000001.png": (3, 1),
    "test_images/Breast/fold3_00000002.png": (3, 2),
}  # fold2 row 2 (tissue 0) is in no line of the CSV: not written


def _pannuke_image(demo: Path, fold: int, row: int) -> bytes:
    table = pq.read_table(demo / "raw" / "PanNuke" / "data" / f"fold{fold}-00000-of-00001.parquet")
    return table.column("image")[row].as_py()["bytes"]


def test_pannuke_reference_names_splits_and_decoded_pixels(demo, capsys):
    _convert(demo_settings(demo, splits="all"), "2D_Task/PanNuke")  # test_images/ and train_images/
    root = demo / "DATA_BASEDIR" / "2D_Images" / "PanNuke"
    assert _files(root) == sorted(PANNUKE_WRITTEN)
    for name, (fold, row) in PANNUKE_WRITTEN.items():
        data = (root / name).read_bytes()
        assert data.startswith(b"\x89PNG")
        mode, pixels = _pixels(data)
        reference_mode, reference_pixels = _reference_decode(_pannuke_image(demo, fold, row))
        assert mode == reference_mode and np.array_equal(pixels, reference_pixels), name
    assert "1 rows are not in PanNuke_split.csv and were skipped" in capsys.readouterr().out


def _rewrite_fold1(demo: Path, images: list[bytes]) -> None:
    path = demo / "raw" / "PanNuke" / "data" / "fold1-00000-of-00001.parquet"
    table = pq.read_table(path)
    column = pa.array([{"bytes": b, "path": None} for b in images], table.schema.field("image").type)
    pq.write_table(table.set_column(table.schema.get_field_index("image"), "image", column), path)


def _encoded(image: Image.Image, fmt: str) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return buffer.getvalue()


def test_pannuke_modes_pillow_keeps_stay_others_become_rgb(demo):
    rgb = np.random.default_rng(1).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    rgba = Image.fromarray(np.dstack([rgb, rgb[..., :1]]), "RGBA")
    palette = Image.fromarray(rgb).convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
    cmyk = Image.fromarray(rgb).convert("CMYK")
    images = [_encoded(rgba, "PNG"), _encoded(palette, "PNG"), _encoded(cmyk, "JPEG")]
    _rewrite_fold1(demo, images)
    settings = demo_settings(demo, verify_checksums=False, splits="all")
    _convert(settings, "2D_Task/PanNuke")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "PanNuke"
    names = ["test_images/Breast/fold1_00000000.png", "test_images/Cervix/fold1_00000001.png",
             "train_images/Colon/fold1_00000002.png"]  # fmt: skip
    for name, data, mode in zip(names, images, ["RGBA", "P", "RGB"], strict=True):
        written = (root / name).read_bytes()
        assert written.startswith(b"\x89PNG")
        assert _pixels(written)[0] == mode
        assert np.array_equal(_pixels(written)[1], _reference_decode(data)[1])
    with Image.open(root / names[1]) as ours:
        assert ours.getpalette() == palette.getpalette()


def test_pannuke_a_name_this_job_wrote_already_gets_1_2(demo):
    """The rule applies to any template: here one whose names collide (the default's never do)."""
    settings = demo_settings(demo, splits="all")
    registry = settings.registry()
    registry.subset("PanNuke").conversions[0].params["name"] = "{split}_images/x.png"
    _convert(settings, "2D_Task/PanNuke", registry=registry)
    root = demo / "DATA_BASEDIR" / "2D_Images" / "PanNuke"
    in_row_order = {"test_images/x.png": (1, 0), "test_images/x_1.png": (1, 1), "train_images/x.png": (1, 2),
                    "test_images/x_2.png": (2, 0), "test_images/x_3.png": (2, 1), "test_images/x_4.png": (3, 0),
                    "train_images/x_1.png": (3, 1), "test_images/x_5.png": (3, 2)}  # fmt: skip
    assert _files(root) == sorted(in_row_order)
    for name, (fold, row) in in_row_order.items():
        assert np.array_equal(_pixels(root / name)[1], _reference_decode(_pannuke_image(demo, fold, row))[1]), name


ROCO_ORDER = [  # the benchmark's fixed reading order, with the demo's row counts
    ("Vaild-00000-of-00001-1ddc94eb806f44ae.parquet", "Vaild", 2),
    ("Train-00000-of-00001-91a106d1a22c7cc9.parquet", "Train", 3),
    ("Valid-00001-of-00002.parquet", "Valid", 1),
    ("Test-00000-of-00001-91a106d1a22c7cc9.parquet", "Test", 3),
    ("Valid-00000-of-00002.parquet", "Valid", 2),
]


def _roco_expected(raw: Path) -> dict[str, bytes]:
    """Every name the benchmark's script gives the demo's rows (one counter over the five files in its order),
    with the bytes stored in the row."""
    expected, seq = {}, 0
    for file, split, rows in ROCO_ORDER:
        table = pq.read_table(raw / "ROCO-QA" / "data" / file)
        assert len(table) == rows
        for row in range(rows):
            seq += 1
            expected[f"images/{split}_sample_{seq:06d}.jpg"] = table.column("image")[row].as_py()["bytes"]
    return expected


def test_roco_one_counter_over_the_files_in_the_fixed_order_bytes_unchanged(demo):
    """The test split writes the Test images alone, numbered after the rows of the three files before Test; the
    train split (splits: all) the other four files' images, on the same counter."""
    expected = _roco_expected(demo / "raw")
    assert "images/Test_sample_000007.jpg" in expected and "images/Valid_sample_000011.jpg" in expected
    root = demo / "DATA_BASEDIR" / "2D_Images" / "ROCO-VQA"
    _convert(demo_settings(demo), "ROCO-VQA")
    assert _files(root) == ["images/Test_sample_000007.jpg", "images/Test_sample_000008.jpg",
                            "images/Test_sample_000009.jpg"]  # fmt: skip
    _convert(demo_settings(demo, splits={"2D_Task/ROCO-VQA": "all"}), "ROCO-VQA")
    assert _files(root) == sorted(expected)
    for name, data in expected.items():
        assert (root / name).read_bytes() == data


def test_roco_a_missing_file_is_named_with_what_it_holds(settings, demo):
    """The Valid shard no public listing holds: named as not published upstream, with what it holds (issue 52)."""
    (demo / "raw" / "ROCO-QA" / "data" / "Valid-00001-of-00002.parquet").unlink()
    said = r"roco_qa: not published upstream: data/Valid-00001-of-00002.parquet"
    with pytest.raises(PreprocessError, match=said) as caught:
        _convert(settings, "ROCO-VQA")
    message = str(caught.value).replace("\n       ", "")
    assert "(the second Valid shard, counted by the benchmark before Test)" in message
    assert "the order Vaild, Train, Valid-00001, Test, Valid-00000" in message


# The release's names of the demo's VQA-RAD and MedPix images (its literal task JSONs) and the upstream row
# of each image (preprocess/datasets/vqa_rad/fakes.py VQA_RAD, medpix_clinqa/fakes.py MEDPIX_SHARDS). No
# public script names these images.
RELEASE_NAMES = {
    "VQA-RAD": (
        "VQA-RAD/test",
        {
            "head/synpic54610.png": ("vqa-rad/data/test-00000-of-00001-0b1c2d3e4f.parquet", 0),
            "chest/synpic29265.png": ("vqa-rad/data/test-00000-of-00001-0b1c2d3e4f.parquet", 2),
            "abdomen/synpic31567.png": ("vqa-rad/data/test-00000-of-00001-0b1c2d3e4f.parquet", 4),
        },
    ),
    "MedPIX": (
        "MedPIX",
        {
            "MPX1009_synpic46283.png": ("MEDPIX-ClinQA/data/train-00000-of-00007-1a2b3c.parquet", 0),
            "MPX2045_synpic52130.png": ("MEDPIX-ClinQA/data/train-00000-of-00007-1a2b3c.parquet", 1),
        },
    ),
}


@pytest.mark.parametrize("subset", sorted(RELEASE_NAMES))
def test_vqa_images_are_written_at_the_release_names_once_each(settings, demo, subset):
    folder, names = RELEASE_NAMES[subset]
    written = _convert(settings, subset)
    column = "image_id" if subset == "MedPIX" else "image"  # sic: MedPix's image column
    root = demo / "DATA_BASEDIR" / "2D_Images" / folder
    assert _files(root) == sorted(names) and len(written) == len(names)
    for name, (raw, row) in names.items():
        expected = pq.read_table(demo / "raw" / raw, columns=[column]).column(column)[row].as_py()["bytes"]
        assert (root / name).read_bytes() == expected


def test_radimagenet_nine_rows_three_images(settings, demo):
    table = pq.read_table(demo / "raw" / "RadImageNet-VQA" / "benchmark" / "test-00000-of-00001.parquet")
    assert len(table) == 9 and len(_convert(settings, "RadImageNet-VQA")) == 3


def test_a_row_without_image_is_never_a_match(settings, demo):
    task = demo / "DATA_BASEDIR" / "2D_Task" / "PathVQA" / "Path-VQA_test.json"
    record = {"qry_inst": "", "qry_text": "What does this show?", "qry_img_path": "x/none.png", "tgt_text": ["nothing"]}
    task.write_text(json.dumps([*json.loads(task.read_text()), record]))
    with pytest.raises(RawDataError, match=r"Path-VQA_test.json record 6: matches no row .*\(its 1 matching rows "):
        _convert(settings, "PathVQA")


def test_undecodable_image_and_corrupt_footer_name_the_file(settings, demo):
    path = demo / "raw" / "vqa-rad" / "data" / "test-00000-of-00001-0b1c2d3e4f.parquet"
    table = pq.read_table(path)
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    images = [{"bytes": b"not an image", "path": None}] * 2 + table.column("image").to_pylist()[2:]
    pq.write_table(table.set_column(0, "image", pa.array(images, image)), path)  # rows 0 and 1: one image
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
    assert sorted(row[0] for row in written) == [
        "2D_Images/PMC/PMC3298543_F1.jpg",
        "2D_Images/PMC/PMC8253873_Fig2_288.jpg",
    ]
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


def test_a_zip_bomb_member_is_refused_by_name_and_nothing_written(settings, demo):
    """20 MB of zeros deflate to about 20 KB (1,000x): a listed PMC figure held so is bad input of its item,
    named with its archive, never read into memory or written out as a 20 MB .jpg."""
    archive = next((demo / "raw").rglob("images.zip"))
    with zipfile.ZipFile(archive) as original:
        kept = original.read("figures/PMC3298543_F1.jpg")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("figures/PMC3298543_F1.jpg", kept)
        bomb.writestr("figures/PMC8253873_Fig2_288.jpg", bytes(20 << 20))
    expected = f"{archive}: member figures/PMC8253873_Fig2_288.jpg inflates 20,971,520 bytes out of"
    with pytest.raises(RawDataError, match=re.escape(expected) + r".*over the bound of 100x.*download the archive"):
        _convert(settings, "PMC")
    assert not list((demo / "DATA_BASEDIR").rglob("PMC8253873_Fig2_288.jpg"))


def test_a_zip_member_declaring_a_huge_size_is_refused_unread(tmp_path):
    """A member whose headers declare 3.75 GiB (its data is 4 bytes) is refused from its declared size alone;
    a plain member over a lowered size bound is refused too, and one under both bounds reads whole."""
    path = tmp_path / "images.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("figures/huge.jpg", b"JPEG")
        archive.writestr("figures/big.jpg", os.urandom(3 << 20))
    raw = bytearray(path.read_bytes())
    for header, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # local and central uncompressed size
        at = raw.index(header)
        raw[at + size_at : at + size_at + 4] = (0xF000_0000).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    with pytest.raises(RawDataError, match=r"images\.zip: member figures/huge\.jpg declares 4,026,531,840 bytes"):
        SafeArchive(path).read("figures/huge.jpg")
    assert len(SafeArchive(path).read("figures/big.jpg")) == 3 << 20
    with pytest.raises(RawDataError, match=r"member figures/big\.jpg declares 3,145,728 bytes, over .* 2,097,152"):
        SafeArchive(path, max_member_bytes=2 << 20).read("figures/big.jpg")


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
from preprocess.registry.config import settings_from_dict
from preprocess.pipeline import steps
settings = settings_from_dict({"raw_root": sys.argv[1], "data_basedir": sys.argv[2], "subsets": "all",
                               "registry_overrides": sys.argv[3], "verify_checksums": False})
written = steps.Build(settings).convert(subset="PathVQA")  # the release names big/0000.jpg .. big/4095.jpg
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
        raw / "test-00000-of-00001-big.parquet",
        pa.schema([("image", image), ("question", pa.string()), ("answer", pa.string())]),
    ) as out:
        random = np.random.default_rng(0)  # distinct bytes that do not compress, at twice os.urandom's speed
        for group in range(64):
            blobs = [header + random.bytes(256 * 1024 - 6) + b"\xff\xd9" for _row in range(64)]
            questions = [f"q{group * 64 + row}?" for row in range(64)]  # one question per image
            out.write_table(
                pa.table(
                    {
                        "image": pa.array([{"bytes": b, "path": None} for b in blobs], image),
                        "question": questions,
                        "answer": ["yes"] * 64,
                    }
                )
            )
    assert (raw / "test-00000-of-00001-big.parquet").stat().st_size > 2**30
    task = tmp_path / "DATA" / "2D_Task" / "PathVQA" / "Path-VQA_test.json"
    task.parent.mkdir(parents=True)
    records = [{"qry_text": f"q{i}?", "qry_img_path": f"big/{i:04d}.jpg", "tgt_text": ["yes"]} for i in range(4096)]
    task.write_text(json.dumps(records))
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
    # 2 GiB passed: removed now, not left to the clean-up of old test folders at the end of a later session
    shutil.rmtree(tmp_path / "raw")
    shutil.rmtree(tmp_path / "DATA")
