"""`medheb plan` before anything is downloaded (issue 42, item 1): with an empty raw root and no release, every
image subset is counted at the registry's full-download counts (subsets.yaml `counts`, the npz split counts),
its totals are the README's, and each row says where its items were counted: the raw root, the release's
records or the registry."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from preprocess.errors import RegistryError
from preprocess.registry.config import settings_from_dict
from preprocess.registry.loader import load_registry

pytestmark = pytest.mark.registry_wide  # an added subset must pass it: make test-new-subset

# The README (quick start, step 3) and docs/benchmarks.md ("The full benchmark at the registry's full counts"),
# as they state them (docs/tables.py writes both tables): test 1.9 core-hours and 141.5 GB; all splits 19.2
# core-hours and 952.6 GB (at 256 cores: 19.1 at 32, fewer shards' start-ups).
README = {"test": (1.9, 141.5), "all": (19.2, 952.6)}
COUNTED = {"raw root", "release records", "registry", "not known"}
PATHVQA_RELEASE = REPO / "preprocess/demo/release/2D_Task/PathVQA/Path-VQA_test.json"


def _plan(tmp_path: Path, raw: Path, data: Path, *extra: str, subsets="all") -> subprocess.CompletedProcess:
    config = tmp_path / "config.yaml"
    values = {"raw_root": str(raw), "data_basedir": str(data), "subsets": subsets, "splits": "all"}
    config.write_text(yaml.safe_dump(values))
    return subprocess.run(
        [sys.executable, "-m", "preprocess", "plan", "--config", str(config), *extra],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        # the shipped registry alone, whose full counts the README states (an extra registry folder adds subsets)
        env={**{k: v for k, v in os.environ.items() if k != "MEDHEB_EXTRA_REGISTRY"}, "PYTHONPATH": str(REPO)},
    )


@pytest.fixture
def empty(tmp_path) -> tuple[Path, Path]:
    raw, data = tmp_path / "raw", tmp_path / "DATA_BASEDIR"
    raw.mkdir()
    data.mkdir()
    return raw, data


def test_plan_with_nothing_downloaded_counts_every_subset_at_the_readmes_totals(tmp_path, empty):
    done = _plan(tmp_path, *empty, "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {row["stage"] for row in rows} == {"convert", "check"}  # the raw checks: one row a source
    rows = [row for row in rows if row["stage"] == "convert"]
    # nothing there: every figure is the registry's, two of them stand-ins for counts no public source gives
    assert {row["subset"] for row in rows if row["counted"] == "not known"} == {"2D_Task/USData", "3D_Task/M3D"}
    assert {row["counted"] for row in rows} == {"registry", "not known"}
    items: dict[tuple[str, str], int] = {}
    for row in rows:
        items[row["subset"], row["split"]] = items.get((row["subset"], row["split"]), 0) + row["items"]
    image_subsets = {s.key for s in load_registry(extras=False).subsets if not s.is_text and s.tasks}
    assert len(image_subsets) == 49
    assert {subset for subset, _ in items} == image_subsets
    assert [key for key, n in items.items() if n == 0] == []
    assert items["3D_Task/CT_RATE", "test"] == 1564 and items["3D_Task/CT_RATE", "train"] == 24128
    assert items["3D_Task/MRNet", "train"] == 3390 and items["2D_Task/APTOS", "test"] == 3662
    for splits, (hours, gigabytes) in README.items():
        chosen = [row for row in rows if splits == "all" or row["split"] == "test"]
        # the rows' core-hours to the table's within its rounding (the budget adds a job's start-up per shard)
        assert sum(row["core_hours"] for row in chosen) == pytest.approx(hours, abs=0.1), splits
        assert round(sum(row["bytes"] for row in chosen) / 1e9, 1) == gigabytes, splits
    assert round(sum(row["bytes"] for row in rows) / 1e9, 1) == 952.6  # the README's 952.6 GB


def test_the_table_says_per_row_where_its_items_were_counted(tmp_path, empty):
    done = _plan(tmp_path, *empty, "--cores", "32", "256")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[-2:] == ["counted", "buildable"]
    table = lines[2 : lines.index("")]
    rows = [line for line in table if line.startswith(("2D_Task/", "3D_Task/"))]
    image_subsets = {s.key for s in load_registry(extras=False).subsets if not s.is_text}
    assert {line.split()[0] for line in rows if line.split()[1] == "test"} == image_subsets
    counted = {line.split()[0]: line.split("  ")[-2].strip() for line in rows}
    assert all(line.endswith("  no: raw missing") for line in rows), rows
    assert {key for key, said in counted.items() if said == "not known"} == {"2D_Task/USData", "3D_Task/M3D"}
    assert set(counted.values()) == {"registry", "not known"}
    budget = [line.split() for line in lines if line.startswith(("test ", "all "))]
    assert [row[:2] for row in budget] == [["test", "32"], ["test", "256"], ["all", "32"], ["all", "256"]]
    for row in budget:  # the README's figures, as the budget prints them, whatever the cores
        hours, size = (1.9, ["141.5", "GB"]) if row[0] == "test" else (19.2, ["952.6", "GB"])
        assert float(row[3]) == pytest.approx(hours, abs=0.11) and row[4:6] == size  # 19.1 at 32 cores


def _touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")


def test_the_raw_root_counts_first_then_the_records_then_the_registry(tmp_path, empty):
    raw, data = empty
    _touch(raw / "aptos2019-blindness-detection", *(f"train_images/{n}.png" for n in range(3)))  # files: counted
    _touch(raw / "RadImageNet-VQA", "benchmark/test-00000-of-00001.parquet")  # one parquet of rows: not counted
    _touch(raw / "mimic-cxr-jpg", *(f"files/p10/p1000000{n}/s5000000{n}/i{n}.jpg" for n in range(4)))
    (data / "2D_Task" / "PathVQA").mkdir(parents=True)
    shutil.copy(PATHVQA_RELEASE, data / "2D_Task" / "PathVQA")  # the demo release's task JSON
    named = {record["qry_img_path"] for record in json.loads(PATHVQA_RELEASE.read_text())}
    subsets = ["2D_Task/APTOS", "2D_Task/RadImageNet-VQA", "2D_Task/ChestImagrome", "2D_Task/PathVQA"]
    done = _plan(tmp_path, raw, data, "--json", subsets=subsets)
    assert done.returncode == 0, done.stderr
    found = {(row["subset"], row["conversion"]): (row["items"], row["counted"]) for row in json.loads(done.stdout)}
    assert found[("2D_Task/APTOS", "image_folder")] == (3, "raw root")  # incomplete: what is there
    # a parquet file holds rows, not one item: the registry's 1,000 images, not 1
    assert found[("2D_Task/RadImageNet-VQA", "parquet_records")] == (1000, "registry")
    # the gold crops are the CSV's 1,000 images, not the MIMIC-CXR files beside them
    assert found[("2D_Task/ChestImagrome", "gold_crops")] == (1000, "registry")
    assert found[("2D_Task/ChestImagrome", "mimic_links")] == (11, "registry")  # its links, not the images
    assert found[("2D_Task/PathVQA", "parquet_records")] == (len(named), "release records")
    # no Train_Data JSONL there: the registry's bound, the 4,289 images PathVQA's pairs use (its card)
    assert found[("2D_Task/PathVQA", "parquet_records_train")] == (4289, "registry")
    assert len(named) > 1


def test_the_workflow_cuts_jobs_from_the_same_counts(empty):
    from preprocess.sizing import estimate, shards

    raw, data = empty
    settings = settings_from_dict({"raw_root": str(raw), "data_basedir": str(data), "subsets": "all", "splits": "all"})
    registry = settings.registry()
    subset = registry.subset("3D_Task/CT_RATE")
    train = next(c for _, c in estimate.planned_conversions(settings, registry) if c.name == "volumes_train")
    planned = next(e for e in estimate.estimate(settings, registry, [(subset, train)]))
    assert planned.items == 24128 and planned.counted == "registry"
    assert shards.shard_count(settings, registry, subset, train) == planned.jobs > 1


def _aptos(change):
    def edit(document: dict) -> None:
        change(next(s for s in document["subsets"] if s["folder"] == "APTOS")["conversions"][0])

    return edit


def test_a_conversion_without_a_full_count_is_refused_naming_it(registry_copy):
    registry_copy("datasets/aptos2019/subsets.yaml", _aptos(lambda conversion: conversion.pop("counts")))
    with pytest.raises(RegistryError, match=r"2D_Task/APTOS/image_folder: no full-download item count for its test"):
        load_registry(extras=False)


def test_a_count_for_a_split_the_conversion_does_not_build_is_refused(registry_copy):
    def stray(conversion):
        conversion["counts"]["train"] = {"items": 5, "basis": "a split APTOS has no conversion for"}

    registry_copy("datasets/aptos2019/subsets.yaml", _aptos(stray))
    with pytest.raises(RegistryError, match=r"2D_Task/APTOS/image_folder: counts for \['train'\]"):
        load_registry(extras=False)


def test_a_count_without_its_basis_does_not_load(registry_copy):
    registry_copy(
        "datasets/aptos2019/subsets.yaml", _aptos(lambda conversion: conversion["counts"]["test"].pop("basis"))
    )
    with pytest.raises(RegistryError, match=r"does not match registry.schema.yaml"):
        load_registry(extras=False)


def test_an_unknown_item_unit_of_a_kind_does_not_load(registry_copy):
    registry_copy("registry/kinds.yaml", lambda document: document["kinds"]["image_folder"].update(items="boxes"))
    with pytest.raises(RegistryError, match=r"kinds.yaml: kind image_folder: items is one of"):
        load_registry(extras=False)


def test_an_unknown_item_unit_of_a_recipe_does_not_load(registry_copy):
    def recipe(document):
        document["recipes"]["annotation_crop"]["chest_imagenome_gold"]["items"] = "images"

    registry_copy("datasets/chest_imagenome/recipes.yaml", recipe)
    with pytest.raises(RegistryError, match=r"recipe chest_imagenome_gold of kind annotation_crop: items is one"):
        load_registry(extras=False)


def test_an_override_listing_npz_files_without_their_counts_still_loads(tmp_path):
    """An override (own checksums, the tests' empty stubs) replaces a source's file list: the MedMNIST
    conversions were counted by the shipped npz counts and are not refused for the override's lack of them."""
    from preprocess.registry.loader import DATASETS_DIR

    shipped = yaml.safe_load((DATASETS_DIR / "medmnist" / "sources.yaml").read_text(encoding="utf-8"))["sources"][
        "medmnist"
    ]
    files = [{"id": spec["id"], "path": spec["path"]} for spec in shipped["files"]]  # no npz, no md5
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(yaml.safe_dump({"sources": {"medmnist": {"files": files}}}))
    registry = load_registry(overrides, extras=False)
    assert registry.source("medmnist").file("bloodmnist").npz is None
