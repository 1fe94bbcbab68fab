"""The demo's release files are literal data in the benchmark's record shapes, loadable as the evaluation
loads them (`datasets.load_dataset("json")`)."""

from __future__ import annotations

import json
import os

import pytest

from conftest import DATA
from preprocess.demo import RELEASE, releases
from preprocess.demo.folders import left_out
from preprocess.registry.loader import load_registry

pytestmark = pytest.mark.registry_wide  # an added subset must pass it: make test-new-subset

TRAIN_TSV = DATA / "train-jsonl.tsv"  # the training config's list (its Train.yaml)
TASK_FILES = sorted(p.relative_to(RELEASE).as_posix() for p in RELEASE.rglob("*.json"))


def test_every_release_file_is_a_registered_task_file():
    registry = load_registry()
    registered = {f"{s.group}/{s.folder}/{t.file}" for s in registry.subsets for t in s.tasks}
    assert TASK_FILES and set(TASK_FILES) <= registered


def test_the_demo_ships_task_files_for_every_subset_but_those_it_leaves_out():
    """The dataset folders' declarations of the subsets the demo leaves out (DEMO_LEFT_OUT) hold: it ships
    task files for every other subset, an added folder's included."""
    subsets = {s.key for s in load_registry().subsets}
    shipped = {"/".join(p.relative_to(release).parts[:2]) for release in releases() for p in release.glob("*/*/*.json")}
    declared = left_out()
    assert set(declared) <= subsets and shipped == subsets - set(declared)


@pytest.mark.parametrize("relative", TASK_FILES)
def test_each_task_file_loads_with_datasets(relative, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets

    path = RELEASE / relative
    loaded = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path))
    records = json.loads(path.read_text(encoding="utf-8"))
    assert len(loaded) == len(records) >= 1
    assert set(loaded.column_names) == set().union(*records)


def test_train_jsonl_lines_have_chat_records_and_relative_images():
    files = sorted(RELEASE.rglob("*.jsonl"))
    assert files
    for path in files:
        text = path.relative_to(RELEASE).parts[1] == "Text_Task"  # a text file's records name no image
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            assert isinstance(record["messages"], list)
            assert ("images" not in record) if text else record["images"], path
            record.setdefault("images", [])
            assert all(
                image.startswith("./2D_Images/") or image.startswith("./3D_Images/") for image in record["images"]
            )
            assert not any(os.path.isabs(image) for image in record["images"])


def test_every_demo_train_jsonl_is_named_as_the_training_config_names_it():
    """The demo is literal release data: its Train_Data files carry the names the training config reads."""
    rows = [line.split("\t")[0] for line in TRAIN_TSV.read_text(encoding="utf-8").splitlines() if line[:1] != "#"]
    config = {row.removeprefix("./") for row in rows}
    shipped = {p.relative_to(RELEASE / "Train_Data").as_posix() for p in RELEASE.rglob("*.jsonl")}  # the package's
    assert shipped
    assert sorted(shipped - config) == []


def test_the_demo_is_the_same_bytes_every_time(tmp_path, demo_template):
    from preprocess.demo import write_demo

    again = write_demo(tmp_path / "again")
    first = {p.relative_to(demo_template): p.read_bytes() for p in demo_template.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first.keys() == second.keys()
    assert [name for name in first if first[name] != second[name]] == []
