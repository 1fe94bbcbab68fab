"""Record-driven conversions: where no public script names the images (RadImageNet-VQA, PathVQA, VQA-RAD,
MedPix; the train images of ISIC-2019 and Kvasir), each image is written at the path the release's own task
JSON or Train_Data JSONL names, with the bytes of the upstream item the record is about.

The expectations are written out here from the demo's fakes (preprocess/datasets/<source>/fakes.py: which rows show
which image) and its literal release files, never computed by the matching code."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import REPO, demo_config_file
from preprocess.convert import recordmatch

RADIMAGENET_TEST = "2D_Task/RadImageNet-VQA/RadLmageNet_test.json"
# path under the task file's image root -> the benchmark rows showing its image (three questions per image:
# rows 0-2 image 0, rows 3-5 image 1, rows 6-8 image 2, a JPEG)
RADIMAGENET_NAMES = {"CT/abdomen/case_0917.png": 0, "MR/brain/case_0042.png": 3, "CT/knee/case_1203.jpg": 6}
# the alignment config (train): one row per image; the train JSONL samples rows 0 and 2
RADIMAGENET_TRAIN = {"train/CT/abdomen/case_5521.png": 0, "train/CT/lung/case_7730.png": 2}
# PathVQA test rows: image 0 (a JPEG) rows 0-1, image 1 rows 2-4, image 2 row 5 (row 6 has no image)
PATHVQA_NAMES = {"liver/slide_A12.jpg": 0, "liver/slide_B07.png": 2, "kidney/slide_C33.png": 5}
PATHVQA_TRAIN = {"train_images/lung/train_0003.png": 0, "train_images/colon/train_0011.png": 2}


def _cli(*args, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "preprocess", *args], cwd=cwd, capture_output=True, text=True)


def _row_bytes(path: Path, row: int, column: str = "image") -> bytes:
    return pq.read_table(path, columns=[column]).column(column)[row].as_py()["bytes"]


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _config(demo, tmp_path, **values) -> str:
    return str(demo_config_file(demo, tmp_path / "config.json", **values))


def test_radimagenet_and_pathvqa_images_at_the_release_names_with_the_upstream_bytes(demo, tmp_path):
    config = _config(demo, tmp_path)
    for subset in ("RadImageNet-VQA", "PathVQA"):
        done = _cli("convert", subset, "--config", config, "--results", str(tmp_path / "results"))
        assert done.returncode == 0, done.stderr
    images = demo / "DATA_BASEDIR" / "2D_Images"
    benchmark = demo / "raw" / "RadImageNet-VQA" / "benchmark" / "test-00000-of-00001.parquet"
    assert _tree(images / "RadImageNet-VQA") == sorted(f"test/images/{name}" for name in RADIMAGENET_NAMES)
    for name, row in RADIMAGENET_NAMES.items():
        assert (images / "RadImageNet-VQA" / "test" / "images" / name).read_bytes() == _row_bytes(benchmark, row)
    assert (images / "RadImageNet-VQA" / "test" / "images" / "CT/knee/case_1203.jpg").read_bytes()[
        :3
    ] == b"\xff\xd8\xff"
    pathvqa = demo / "raw" / "path-vqa" / "data" / "test-00000-of-00001-9f8e7d6c5b.parquet"
    assert _tree(images / "PathVQA") == sorted(f"test_images/{name}" for name in PATHVQA_NAMES)
    for name, row in PATHVQA_NAMES.items():
        assert (images / "PathVQA" / "test_images" / name).read_bytes() == _row_bytes(pathvqa, row)
    done = _cli("validate", str(demo / "DATA_BASEDIR"), "--config", config, "--subset", "RadImageNet-VQA")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _cli("validate", str(demo / "DATA_BASEDIR"), "--config", config, "--subset", "PathVQA").returncode == 0


def test_a_question_shared_by_two_images_is_decided_by_the_paths_other_records(demo):
    """'Is this image abnormal?' with answer yes is asked of images 0 and 2: alone it names neither."""
    benchmark = pq.read_table(demo / "raw" / "RadImageNet-VQA" / "benchmark" / "test-00000-of-00001.parquet")
    rows = benchmark.select(["question", "answer"]).to_pylist()
    shared = [i for i, r in enumerate(rows) if r == {"question": "Is this image abnormal?", "answer": "yes"}]
    assert shared == [1, 7]  # two images, the same question and answer
    records = json.loads((demo / "DATA_BASEDIR" / RADIMAGENET_TEST).read_text())
    knee = [r["qry_text"] for r in records if r["qry_img_path"] == "CT/knee/case_1203.jpg"]
    assert knee[0] == "Is this image abnormal?" and len(knee) == 2  # and a region question that decides it


def test_normalisation_of_question_texts():
    assert recordmatch.normal_question("<|image_1|>  Which Region\n is shown?\nChoices: A. x B. y") == (
        "which region is shown?"
    )
    assert recordmatch.normal_question("<image>\nDescribe this medical image.") == "describe this medical image."
    assert recordmatch.normal_answer("B. Brain") == "brain" and recordmatch.normal_answer(" MRI ") == "mri"


def _edit_release(demo, relative: str, extra: list[dict]) -> Path:
    path = demo / "DATA_BASEDIR" / relative
    path.write_text(json.dumps(json.loads(path.read_text()) + extra, indent=1))
    return path


UNMATCHED = {  # no row of the fake asks this
    "qry_inst": "<|image_1|> Answer the question about the image.",
    "qry_text": "Is there a fracture?",
    "qry_img_path": "CT/abdomen/case_9999.png",
    "tgt_text": ["yes", "no"],
}
DISAGREEING = {  # image 1's answer: the path's other records name image 0
    "qry_inst": "<|image_1|> Answer the question about the image.",
    "qry_text": "What is the imaging modality of this image?",
    "qry_img_path": "CT/abdomen/case_0917.png",
    "tgt_text": ["MRI", "CT", "X-ray", "ultrasound"],
}
UNDECIDED = {  # images 0 and 2 both fit, and the path has no other record
    "qry_inst": "<|image_1|> Answer the question about the image.",
    "qry_text": "Is this image abnormal?",
    "qry_img_path": "CT/other/case_0001.png",
    "tgt_text": ["yes", "no"],
}


def test_unmatched_disagreeing_and_undecided_records_are_named_and_counted(demo, tmp_path):
    _edit_release(demo, RADIMAGENET_TEST, [UNMATCHED, DISAGREEING, UNDECIDED])  # records 8, 9 and 10
    config = _config(demo, tmp_path)
    done = _cli("convert", "RadImageNet-VQA", "--config", config, "--results", str(tmp_path / "results"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "2D_Task/RadImageNet-VQA/parquet_records: 3 bad items in the release's records" in done.stderr
    assert "RadLmageNet_test.json record 8: matches no row of the 1 files ['benchmark/test-*.parquet']" in done.stderr
    assert "(no row has its question); tried question 'is there a fracture?', answer 'yes'" in done.stderr
    assert "test/images/CT/abdomen/case_0917.png: its records in" in done.stderr
    assert "point at different images (record 0 -> rows ['test-00000-of-00001.parquet:0', " in done.stderr
    assert "record 9 -> rows ['test-00000-of-00001.parquet:3']" in done.stderr
    assert "CT/other/case_0001.png: its records in" in done.stderr and "fit 2 images alike" in done.stderr
    assert not (demo / "DATA_BASEDIR" / "2D_Images" / "RadImageNet-VQA").exists()

    skip = _config(demo, tmp_path, on_bad_input="skip")
    done = _cli("convert", "RadImageNet-VQA", "--config", skip, "--results", str(tmp_path / "results"))
    assert done.returncode == 0, done.stderr
    assert "3 bad items skipped (on_bad_input: skip), listed in the manifest" in done.stdout
    manifest = tmp_path / "results" / "convert" / "2D_Task" / "RadImageNet-VQA" / "parquet_records.0-of-1.tsv"
    with open(manifest, encoding="utf-8", newline="") as handle:
        problems = [row for row in csv.reader(handle, dialect="excel-tab") if row[1] == "problem"]
    assert len(problems) == 3
    built = demo / "DATA_BASEDIR" / "2D_Images" / "RadImageNet-VQA" / "test" / "images"
    assert _tree(built) == ["CT/knee/case_1203.jpg", "MR/brain/case_0042.png"]  # the disagreeing path is not
    done = _cli("validate", str(demo / "DATA_BASEDIR"), "--config", skip, "--subset", "RadImageNet-VQA")
    assert done.returncode == 1 and "CT/abdomen/case_0917.png" in done.stdout


def test_a_pathvqa_record_matching_no_row_through_its_answer(demo, tmp_path):
    wrong = {**UNMATCHED, "qry_text": "Is this tissue malignant?", "qry_img_path": "x/y.png", "tgt_text": ["maybe"]}
    _edit_release(demo, "2D_Task/PathVQA/Path-VQA_test.json", [wrong])
    done = _cli("convert", "PathVQA", "--config", _config(demo, tmp_path), "--results", str(tmp_path / "r"))
    assert done.returncode != 0 and "1 bad items in the release's records" in done.stderr
    assert "Path-VQA_test.json record 6: matches no row" in done.stderr
    assert "(3 rows have its question but not its answer/choices); tried question 'is this tissue malignant?', " in (
        done.stderr
    )


def test_without_the_release_json_check_convert_and_status_name_the_file_to_download(demo, tmp_path):
    (demo / "DATA_BASEDIR" / RADIMAGENET_TEST).unlink()
    config = _config(demo, tmp_path)
    done = _cli("convert", "RadImageNet-VQA", "--config", config, "--results", str(tmp_path / "results"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "2D_Task/RadImageNet-VQA: not built: release file missing" in done.stderr
    assert f"release: {RADIMAGENET_TEST} is missing under" in done.stderr
    assert "download the benchmark release's 2D_Task/RadImageNet-VQA/ into DATA_BASEDIR" in done.stderr
    done = _cli("check", "--config", config, "--results", str(tmp_path / "results"), "--source", "radimagenet_vqa")
    assert "Release files missing" in done.stdout and f"2D_Task/RadImageNet-VQA: release: {RADIMAGENET_TEST}" in (
        done.stdout
    )
    done = _cli(
        "status", str(demo / "DATA_BASEDIR"), "--config", config, "--json", "--results", str(tmp_path / "results")
    )
    rows = {row["subset"]: row for row in json.loads(done.stdout)["subsets"]}
    assert rows["2D_Task/RadImageNet-VQA"]["state"] == "not built: release file missing"
    assert "download the benchmark release's 2D_Task/RadImageNet-VQA/" in rows["2D_Task/RadImageNet-VQA"]["next_step"]


def test_vqa_train_images_from_the_train_records_with_splits_all(demo, tmp_path):
    config = _config(demo, tmp_path, splits="all")
    for subset in ("RadImageNet-VQA", "PathVQA"):
        done = _cli("convert", subset, "--config", config, "--results", str(tmp_path / "results"))
        assert done.returncode == 0, done.stderr
    images = demo / "DATA_BASEDIR" / "2D_Images"
    alignment = demo / "raw" / "RadImageNet-VQA" / "alignment" / "train-00000-of-00001.parquet"
    for name, row in RADIMAGENET_TRAIN.items():
        assert (images / "RadImageNet-VQA" / name).read_bytes() == _row_bytes(alignment, row)
    train = demo / "raw" / "path-vqa" / "data" / "train-00000-of-00001-9f8e7d6c5b.parquet"
    for name, row in PATHVQA_TRAIN.items():
        assert (images / "PathVQA" / name).read_bytes() == _row_bytes(train, row)
    for subset in ("RadImageNet-VQA", "PathVQA"):
        done = _cli("validate", str(demo / "DATA_BASEDIR"), "--config", config, "--subset", subset)
        assert done.returncode == 0 and "Train_Data/2D_Task/" in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("subset", "named", "raw"),
    [
        (
            "ISIC-2019",
            "ISIC-2019/train/ISIC_2019_Training_Input/ISIC_0000000.jpg",
            "ISIC_2019/ISIC_2019_Training_Input/ISIC_0000000.jpg",
        ),
        (
            "Kvasir",
            "kvasir-dataset/datasets/train/polyps/06a3b9e0-poly-4c1d.jpg",
            "kvasir-dataset/kvasir-dataset-v2/polyps/06a3b9e0-poly-4c1d.jpg",
        ),
    ],
)
def test_isic_and_kvasir_train_images_named_by_a_train_jsonl(demo, tmp_path, subset, named, raw):
    config = _config(demo, tmp_path, splits="all")
    done = _cli("convert", subset, "--config", config, "--results", str(tmp_path / "results"))
    assert done.returncode == 0, done.stderr
    built = demo / "DATA_BASEDIR" / "2D_Images" / named
    assert built.read_bytes() == (demo / "raw" / raw).read_bytes()
    assert os.stat(built).st_ino == os.stat(demo / "raw" / raw).st_ino  # a hard link, as the test images
    done = _cli("validate", str(demo / "DATA_BASEDIR"), "--config", config, "--subset", subset)
    assert done.returncode == 0, done.stdout


def test_plan_counts_the_paths_the_records_name(demo, tmp_path):
    config = _config(demo, tmp_path, splits="all", subsets=["2D_Task/RadImageNet-VQA", "2D_Task/PathVQA"])
    done = _cli("plan", "--config", config, "--json")
    assert done.returncode == 0, done.stderr
    rows = [e for e in json.loads(done.stdout) if e["stage"] == "convert"]  # the other stages' rows besides
    found = {(e["subset"], e["split"]): e["items"] for e in rows}
    assert found == {
        ("2D_Task/RadImageNet-VQA", "test"): 3,  # images, not records (8)
        ("2D_Task/RadImageNet-VQA", "train"): 2,
        ("2D_Task/PathVQA", "test"): 3,
        ("2D_Task/PathVQA", "train"): 2,
    }


@pytest.mark.workflow
def test_the_workflow_with_splits_all_resolves_every_record_driven_path(demo, tmp_path):
    """A `make demo`-style run (the shipped config, the Snakemake workflow) with splits: all."""
    (tmp_path / "config.yaml").write_text((REPO / "config.yaml").read_text())
    keys = ["RadImageNet-VQA", "PathVQA", "VQA-RAD", "MedPIX", "ISIC-2019", "Kvasir"]
    subsets = json.dumps([f"2D_Task/{key}" for key in keys])
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path)]
    done = subprocess.run(
        [*command, "--cores", "2", "--config", "splits=all", f"subsets={subsets}"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-4000:]
    rows = json.loads((tmp_path / "results" / "validation" / "summary.json").read_text())["files"]
    train = sorted(row["file"] for row in rows if row["file"].startswith("Train_Data/"))
    assert train == [
        "Train_Data/2D_Task/ISIC_2019/ISIC_2019_train.jsonl",
        "Train_Data/2D_Task/Kvasir/Kvasir_train.jsonl",
        "Train_Data/2D_Task/MedPIX/MedPix_train.jsonl",
        "Train_Data/2D_Task/PathVQA/Path-VQA_train.jsonl",
        "Train_Data/2D_Task/RadImageNet-VQA/RadLmageNet_train_sampled.jsonl",
        "Train_Data/2D_Task/VQA-RAD/VQA_train.jsonl",
    ]
    assert all(row["ok"] == row["paths"] > 0 and not row["not_built"] for row in rows), rows
    assert {row["subset"] for row in rows} == {f"2D_Task/{key}" for key in keys}


def test_chosen_rows_of_a_parquet_come_with_their_own_row_numbers(tmp_path):
    """A sample of a big table (the alignment config) is read by row groups; rows keep their numbers."""
    import pyarrow as pa

    from preprocess.formats.parquet import iter_images

    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table({"image": pa.array([{"bytes": bytes([i]) * 3, "path": None} for i in range(23)], image)})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=5)
    chosen = {0, 4, 11, 12, 22}
    found = {r.row: r.data for r in iter_images(tmp_path / "t.parquet", "image", batch_rows=3, rows=chosen)}
    assert found == {i: bytes([i]) * 3 for i in sorted(chosen)}
    assert list(iter_images(tmp_path / "t.parquet", "image", rows=set())) == []
