"""`medheb need`: the raw files the release's records name, by each kind's naming rule, stated here from the
benchmark's layout (the MIMIC link farms link files/ and p10..p19 to MIMIC-CXR-JPG's files/; a CT-RATE slice
folder <split>_fixed_sliced/<scan>/ comes from dataset/<split>_fixed/<patient>/<scan>/<scan>_1.nii.gz)."""

from __future__ import annotations

import json
import posixpath
import shutil
from pathlib import Path

from conftest import demo_config_file
from preprocess.cli import main

MIMIC_SUBSETS = {  # task folder -> (image folder, the folder its task records are relative to)
    "MIMIC-CXR-Report": ("MIMIC-CXR-Report", "files"),
    "MIMIC-CXR-T": ("MIMIC-CXR-T", ""),
    "MIMIC-CXR-VQA": ("MIMIC-CXR-VQA", "files"),
    "ChestImagrome": ("ChestImagrome", ""),
}
IMAGE_FIELDS = ("qry_img_path", "tgt_img_path", "images", "positive_images", "negative_images")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _task_paths(data: Path, group: str, folder: str) -> list[str]:
    return [
        path
        for task in sorted((data / group / folder).glob("*.json"))
        for record in json.loads(task.read_text())
        for name in IMAGE_FIELDS
        for path in _strings(record.get(name))
        if path
    ]


def _train_paths(data: Path, prefix: str) -> list[str]:
    """Train_Data image paths under `prefix` (relative to DATA_BASEDIR), with the prefix taken off."""
    found = []
    for jsonl in sorted((data / "Train_Data").rglob("*.jsonl")):
        for line in jsonl.read_text().splitlines():
            record = json.loads(line) if line.strip() else {}
            for name, value in record.items():
                for path in _strings(value) if name.endswith("images") else ():
                    path = posixpath.normpath(path)
                    if path.startswith(prefix + "/"):
                        found.append(path[len(prefix) + 1 :])
    return found


def _need(capsys, config: Path, *args: str) -> list[str]:
    capsys.readouterr()
    assert main(["need", *args, "--config", str(config)]) == 0
    return capsys.readouterr().out.splitlines()


def _mimic_raw(path: str) -> str | None:
    """The raw file behind a path relative to a subset folder: files/x -> files/x, p1N/x -> files/p1N/x."""
    head = path.split("/")[0]
    if head == "files":
        return path
    if head in {f"p1{n}" for n in range(10)}:
        return f"files/{path}"
    return None  # a crop or another output of the subset's own


def test_mimic_lists_exactly_the_images_the_records_name(demo, tmp_path, capsys):
    raw = demo / "raw" / "mimic-cxr-jpg"
    extra = ["files/p12/p12000001/s50000001/aaaa0000-extra.jpg", "files/p10/p10000032/s50414267/bbbb1111-extra.jpg"]
    for name in extra:  # the raw folder holds more than the benchmark uses
        (raw / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(next(raw.rglob("*.jpg")), raw / name)
    data = demo / "DATA_BASEDIR"
    expected = {"mimic-cxr-2.0.0-split.csv.gz"}  # the side file the conversions read
    for task_folder, (image_folder, relative_to) in MIMIC_SUBSETS.items():
        named = [posixpath.join(relative_to, p) for p in _task_paths(data, "2D_Task", task_folder)]
        named += _train_paths(data, f"2D_Images/{image_folder}")
        expected |= {raw_path for path in named if (raw_path := _mimic_raw(posixpath.normpath(path)))}
    listed = _need(capsys, demo_config_file(demo, tmp_path / "c.yaml", splits="all"), "mimic_cxr_jpg")
    assert sorted(listed) == sorted(expected)
    assert len(expected) >= 3
    held = {p.relative_to(raw).as_posix() for p in raw.rglob("*") if p.is_file()}
    assert set(listed) < held and not set(extra) & set(listed)


def _ct_rate_volume(split_folder: str) -> str:
    """valid_fixed_sliced/valid_2_b -> dataset/valid_fixed/valid_2/valid_2_b/valid_2_b_1.nii.gz"""
    kind, scan = split_folder.split("/")[:2]
    split = kind.split("_fixed_")[0]
    patient = "_".join(scan.split("_")[:2])
    return f"dataset/{split}_fixed/{patient}/{scan}/{scan}_1.nii.gz"


def test_ct_rate_lists_the_volumes_whose_slices_the_records_name(demo, tmp_path, capsys):
    raw = demo / "raw" / "CT-RATE"
    extra = "dataset/valid_fixed/valid_9/valid_9_a/valid_9_a_1.nii.gz"  # a volume no record names
    (raw / extra).parent.mkdir(parents=True)
    shutil.copy(next(raw.rglob("valid_1_a_1.nii.gz")), raw / extra)
    data = demo / "DATA_BASEDIR"
    named = _task_paths(data, "3D_Task", "CT_RATE")  # relative to valid_fixed_sliced/ or to the subset folder
    folders = [p if "_fixed_" in p.split("/")[0] else f"valid_fixed_sliced/{p}" for p in named]
    folders += _train_paths(data, "3D_Images/CT_RATE")
    expected = {_ct_rate_volume(f) for f in folders} | {"dataset/metadata/validation_metadata.csv"}
    listed = _need(capsys, demo_config_file(demo, tmp_path / "c.yaml", splits="all"), "ct_rate")
    assert sorted(listed) == sorted(expected)
    assert any("train_fixed" in p for p in listed)  # splits: all reaches the train volumes Train_Data names
    held = {p.relative_to(raw).as_posix() for p in raw.rglob("*") if p.is_file()}
    assert set(listed) < held and extra not in listed
    test_only = _need(capsys, demo_config_file(demo, tmp_path / "t.yaml", splits="test"), "ct_rate")
    assert sorted(test_only) == sorted(p for p in expected if "train_fixed" not in p)


def test_ct_rate_need_is_what_the_build_sliced(built_demo, capsys, monkeypatch):
    """The shipped config's build (splits: test) sliced exactly the volumes the need list names."""
    monkeypatch.chdir(built_demo.workdir)  # the shipped config's paths are relative to it
    built = built_demo.workdir / "demo" / "DATA_BASEDIR" / "3D_Images" / "CT_RATE"
    sliced = {_ct_rate_volume(f"{p.parent.name}/{p.name}") for p in built.glob("*_fixed_sliced/*") if p.is_dir()}
    listed = _need(capsys, built_demo.workdir / "config.yaml", "ct_rate")
    assert sorted(p for p in listed if p.endswith(".nii.gz")) == sorted(sliced) and len(sliced) == 3


def test_without_the_release_the_globs_stand_and_a_note_says_why(demo, tmp_path, capsys):
    shutil.rmtree(demo / "DATA_BASEDIR" / "3D_Task" / "CT_RATE")
    assert main(["need", "ct_rate", "--config", str(demo_config_file(demo, tmp_path / "c.yaml"))]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "dataset/metadata/validation_metadata.csv",
        "dataset/valid_fixed/valid_*/valid_*_*/valid_*_*_1.nii.gz",
    ]
    assert "no release record under DATA_BASEDIR names the files" in err and "ct_rate: 1 files and 1 patterns" in err


def test_urls_and_hf_command(demo, tmp_path, capsys):
    config = demo_config_file(demo, tmp_path / "c.yaml")
    urls = _need(capsys, config, "mimic_cxr_jpg", "--urls")
    assert "https://physionet.org/files/mimic-cxr-jpg/2.1.0/mimic-cxr-2.0.0-split.csv.gz" in urls
    images = [u for u in urls if u.endswith(".jpg")]
    assert images and all(u.startswith("https://physionet.org/files/mimic-cxr-jpg/2.1.0/files/p1") for u in images)
    (command,) = _need(capsys, config, "ct_rate", "--hf")
    assert command.startswith("hf download ibrahimhamamci/CT-RATE --repo-type dataset --local-dir ")
    assert "'dataset/valid_fixed/valid_2/valid_2_b/valid_2_b_1.nii.gz'" in command


def test_info_shows_the_narrowed_download_first(demo, tmp_path, capsys):
    config = demo_config_file(demo, tmp_path / "c.yaml")
    assert main(["info", "ct_rate", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    narrowed, counts = out.index(f"medheb need ct_rate --config {config}"), out.index("ct_rate: 4 files (4 present")
    assert narrowed < counts < out.index("The whole download:") < out.index("1. Sign in to Hugging Face")
    assert main(["info", "mimic_cxr_jpg"]) == 0  # without a config: the commands, no counts
    out = capsys.readouterr().out
    assert out.index("medheb need mimic_cxr_jpg --urls --config my.yaml") < out.index("The whole download:")
    assert "wget -N -c -x -nH --cut-dirs=3 --user <your PhysioNet user> --ask-password -i mimic_cxr_jpg-urls.txt" in out


def test_check_counts_the_needed_files(demo, tmp_path, capsys):
    raw = demo / "raw" / "mimic-cxr-jpg"
    gone = "files/p11/p11000011/s51029426/1e3bbd9a-4d3d6b9e-5e1c8f76-6b2a7c41-0e6d8b21.jpg"  # named by the records
    (raw / gone).unlink()
    results = tmp_path / "results"
    config = demo_config_file(demo, tmp_path / "c.yaml")
    assert main(["check", "--source", "mimic_cxr_jpg", "--config", str(config), "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "  mimic_cxr_jpg: 3 of 4 needed files present\n" in out and f"    missing {gone}\n" in out
    assert (results / "need" / "mimic_cxr_jpg-missing.txt").read_text() == f"{gone}\n"


def test_radgenome_and_chexpert_rules(demo, tmp_path, capsys):
    """RadGenome's slice folder valid_1004/valid_1004a/ is the volume valid_1004_a_1.nii.gz in that folder (the
    folder drops the underscore); CheXpert Plus's image root is a link to PNG/, so a record path png/x is PNG/x
    (the demo's records name both of its images)."""
    config = demo_config_file(demo, tmp_path / "c.yaml")
    assert _need(capsys, config, "radgenome_chestct") == [
        "dataset/valid_preprocessed/valid_1004/valid_1004a/valid_1004_a_1.nii.gz"
    ]
    assert _need(capsys, config, "chexpert_plus") == [
        "PNG/train/patient00001/study1/view1_frontal.png",
        "PNG/train/patient00002/study2/view2_lateral.png",
        "df_chexpert_plus_240401.csv",
    ]
