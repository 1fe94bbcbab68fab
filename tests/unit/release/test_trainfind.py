"""Every Train_Data JSONL is found wherever it sits under Train_Data/, and each image path belongs to the subset
whose image tree its own prefix names (REFERENCE.md section 6): the training config keeps files in
`2D_Task/Brain_Tumor_MRI/`, `ISIC_2019/`, `VinDrCXR/` and directly in `Text_Task/`, which are not the test
folders. The registry lists the config's 96 files (tests/data/train-jsonl.tsv, from its Train.yaml)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, demo_config_file, demo_settings
from preprocess.pipeline import steps
from preprocess.registry.loader import load_registry
from preprocess.release import trainlist

TRAIN_TSV = DATA / "train-jsonl.tsv"
BRAIN = "Train_Data/2D_Task/Brain_Tumor_MRI/Brain_Tumor_MRI_train.jsonl"
VINDR = "Train_Data/2D_Task/VinDrCXR/VinDr-CXR_train.jsonl"
ISIC = "Train_Data/2D_Task/ISIC_2019/ISIC_2019_i2i_train.jsonl"  # written by the test (the demo's are not ours)
MEDMCQA = "Train_Data/Text_Task/medmcqa_train.jsonl"
SYSTEM = {"role": "system", "content": "Represent the given image with the following question:"}


def _config_files() -> list[str]:
    rows = [line.split("\t")[0] for line in TRAIN_TSV.read_text().splitlines() if not line.startswith("#")]
    return [row.removeprefix("./") for row in rows]


def test_registry_lists_the_96_files_of_the_training_config():
    registry = load_registry()
    assert sorted(registry.train_files) == sorted(_config_files())
    assert len(registry.train_files) == 96
    # the folders that are not the subset's own, and the text files, by name
    assert registry.train_files["2D_Task/Brain_Tumor_MRI/Brain_Tumor_MRI_train.jsonl"] == "2D_Task/Brain-Tumor-MRI"
    assert registry.train_files["2D_Task/ISIC_2019/ISIC_2019_t2i_train.jsonl"] == "2D_Task/ISIC-2019"
    assert registry.train_files["2D_Task/VinDrCXR/VinDr-CXR_train.jsonl"] == "2D_Task/VindrCXR"
    assert registry.train_files["Text_Task/medmcqa_train.jsonl"] == "Text_Task/MedMCQA"
    assert registry.train_files["Text_Task/Med_Embeds_train.jsonl"] is None  # a training set of no subset
    # every other file sits in its subset's own task folder
    for path, key in registry.train_files.items():
        if path.startswith(("2D_Task/", "3D_Task/")) and not path.startswith(
            ("2D_Task/Brain_Tumor_MRI/", "2D_Task/ISIC_2019/", "2D_Task/VinDrCXR/")
        ):
            assert path.rsplit("/", 1)[0] == key, path


def _line(images: list[str], text: str = "<image>What is shown?", **more) -> str:
    record = {"messages": [SYSTEM, {"role": "user", "content": text}], "images": images, **more}
    return json.dumps(record) + "\n"


def _validate(demo: Path, config: Path, *more: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "preprocess", "validate", str(demo / "DATA_BASEDIR"), "--config", str(config)]
    # from the demo's own folder: a results folder in the working directory would be read (its manifests)
    return subprocess.run([*command, *more], capture_output=True, text=True, cwd=demo.parent)


@pytest.fixture
def built(demo, tmp_path) -> tuple[Path, Path]:
    """The demo with Brain-Tumor-MRI, ISIC-2019 and VinDr-CXR built with splits: all, a Train_Data file of
    ISIC-2019 in ISIC_2019/ (naming test images, which a default build makes), and the CLI's config."""
    settings = demo_settings(demo, splits="all")
    for key in ("2D_Task/Brain-Tumor-MRI", "2D_Task/ISIC-2019", "2D_Task/VindrCXR"):
        steps.Build(settings).convert(subset=key)
    isic = demo / "DATA_BASEDIR" / ISIC
    isic.parent.mkdir(parents=True, exist_ok=True)
    names = ["ISIC_0034321.jpg", "ISIC_0034322.jpg"]
    isic.write_text("".join(_line([f"./2D_Images/ISIC-2019/test/ISIC_2019_Test_Input/{n}"]) for n in names))
    return demo, demo_config_file(demo, tmp_path / "config.json", splits="all")


def test_validate_finds_and_checks_the_files_in_every_folder(built, tmp_path):
    demo, config = built
    done = _validate(demo, config, "--report", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    files = {row["file"]: row for row in json.loads((tmp_path / "r.json").read_text())["files"]}
    assert files[BRAIN]["subset"] == "2D_Task/Brain-Tumor-MRI"
    assert files[BRAIN]["records"] == 4 and files[BRAIN]["ok"] == files[BRAIN]["paths"] == 4
    assert files[VINDR]["subset"] == "2D_Task/VindrCXR"
    assert files[VINDR]["records"] == 2 and files[VINDR]["ok"] == files[VINDR]["paths"] == 4  # query + crop each
    assert files[ISIC]["subset"] == "2D_Task/ISIC-2019" and files[ISIC]["ok"] == files[ISIC]["paths"] == 2
    # a text file: its records are checked, it names no image
    assert files[MEDMCQA]["subset"] == "Text_Task/MedMCQA"
    assert files[MEDMCQA]["records"] == 2 and files[MEDMCQA]["paths"] == 0
    for name in (BRAIN, VINDR, ISIC, MEDMCQA):
        assert name in done.stdout


def test_a_missing_image_is_reported_under_its_subset(built, tmp_path):
    demo, config = built
    lost = "./2D_Images/Brain-Tumor-MRI/datasets/Training/glioma/Tr-gl_0002.jpg"
    with open(demo / "DATA_BASEDIR" / BRAIN, "a") as handle:
        handle.write(_line([lost]))
    done = _validate(demo, config, "--report", str(tmp_path / "r.json"))
    assert done.returncode == 1
    assert f"{BRAIN}: record 4, images: missing: {lost!r} no such file (did you mean Tr-gl_0001.jpg?)" in done.stdout
    files = {row["file"]: row for row in json.loads((tmp_path / "r.json").read_text())["files"]}
    assert files[BRAIN]["subset"] == "2D_Task/Brain-Tumor-MRI" and files[BRAIN]["missing"] == 1
    alone = _validate(demo, config, "--subset", "Brain-Tumor-MRI")  # the subset's own validation sees it too
    assert alone.returncode == 1 and f"{BRAIN}: record 4, images: missing: {lost!r}" in alone.stdout


def test_a_path_under_no_subset_is_named(built):
    demo, config = built
    stray = demo / "DATA_BASEDIR" / "Train_Data" / "2D_Task" / "Elsewhere" / "elsewhere_train.jsonl"
    stray.parent.mkdir(parents=True)
    stray.write_text(_line(["./2D_Images/NoSuchFolder/a.png"]))
    with open(demo / "DATA_BASEDIR" / BRAIN, "a") as handle:  # in a file a subset answers for
        handle.write(
            _line(["./2D_Images/Brain-Tumor-MRI/datasets/Training/glioma/Tr-gl_0001.jpg", "3D_Images/X/b.png"])
        )
    done = _validate(demo, config)
    assert done.returncode == 1
    assert (
        "Train_Data/2D_Task/Elsewhere/elsewhere_train.jsonl: record 0, images: no_subset: "
        "'./2D_Images/NoSuchFolder/a.png' belongs to no subset: 2D_Images/NoSuchFolder/ is no subset's image folder"
    ) in done.stdout
    assert f"{BRAIN}: record 4, images: no_subset: '3D_Images/X/b.png' belongs to no subset" in done.stdout


def test_status_counts_each_subsets_train_data_paths(built):
    demo, config = built
    command = [sys.executable, "-m", "preprocess", "status", str(demo / "DATA_BASEDIR"), "--config", str(config)]
    done = subprocess.run([*command, "--json"], capture_output=True, text=True, cwd=demo.parent)
    rows = {row["subset"]: row for row in json.loads(done.stdout)["subsets"]}
    # ISIC-2019: the 2 test images of the fixture's file and the 2 train images of the demo's ISIC_2019_train.jsonl
    for key, count in (("2D_Task/Brain-Tumor-MRI", 4), ("2D_Task/VindrCXR", 4), ("2D_Task/ISIC-2019", 4)):
        assert rows[key]["train_state"] == "built", key
        assert rows[key]["train_paths_ok"] == rows[key]["train_paths"] == count, key


def test_records_for_gives_each_subset_its_own_paths(demo):
    """A record naming images of two subsets is a record of each, with that subset's paths only."""
    registry = load_registry()
    base = demo / "DATA_BASEDIR"
    shared = base / "Train_Data" / "2D_Task" / "Mixed" / "mixed_train.jsonl"
    shared.parent.mkdir(parents=True)
    brain = "2D_Images/Brain-Tumor-MRI/datasets/Training/notumor/Tr-no_0001.jpg"
    aptos = "2D_Images/APTOS/train_images/000c1434d8d7.png"
    shared.write_text("\n" + _line([f"./{brain}"], positive_images=[f".//{aptos}"]) + _line([f"./{aptos}"]))
    found = [r for r in trainlist.records_for(base, registry, registry.subset("Brain-Tumor-MRI")) if r.file == shared]
    assert [(r.number, r.paths) for r in found] == [(1, (brain,))]  # 0-based line number (line 0 is blank)
    found = [r for r in trainlist.records_for(base, registry, registry.subset("APTOS")) if r.file == shared]
    assert [(r.number, r.paths) for r in found] == [(1, (aptos,)), (2, (aptos,))]
    assert found[0].record["images"] == [f"./{brain}"]
    vindr = trainlist.named_paths(base, registry, registry.subset("VindrCXR"))
    image = "1b2c3d4e5f60718293a4b5c6d7e8f901"
    assert vindr == [
        f"2D_Images/VindrCXR/VinDr-CXR-dataset/ai-vinbigdata/train/{image}.png",
        f"2D_Images/VindrCXR/crop/{image}_1_0.png",
        f"2D_Images/VindrCXR/crop/{image}_0_0.png",
    ]
    assert base / VINDR in trainlist.train_jsonl_files(base) and base / MEDMCQA in trainlist.train_jsonl_files(base)
