"""`python -m preprocess plan` on a synthetic full-size raw root: every registry file list satisfied at the
registry's counts (empty stub files), CT-RATE's train split included (its 24,128 `_1` reconstructions): it
is quick, and it cuts the train split into jobs of at most an hour, not one job per volume."""

from __future__ import annotations

import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from preprocess.registry.config import settings_from_dict
from preprocess.registry.loader import DATASETS_DIR, load_registry
from preprocess.sizing import estimate
from preprocess.sizing import shards as sharding
from preprocess.sizing.costs import cost_key, load_costs
from preprocess.sizing.counts import count_items

CT_RATE_TRAIN_VOLUMES = 24128  # the train scans, one `_1` reconstruction each (subsets.yaml counts)


def _instance(pattern: str, n: int) -> str:
    """The n-th path matching a registry glob: '**/' dropped, '*' a unique token, a class its n-th character."""
    text = pattern.replace("**/", "")

    def char_class(match: re.Match) -> str:
        chars = re.sub(r"(.)-(.)", lambda r: "".join(map(chr, range(ord(r[1]), ord(r[2]) + 1))), match[1])
        return chars[n % len(chars)]

    return re.sub(r"\[([^]]+)\]", char_class, text).replace("*", f"f{n}").replace("?", "a")


def _full_size_root(root: Path, registry) -> int:
    """Empty stubs for every file spec, deepest patterns first (a folder a glob names may hold others)."""
    specs = [(source, spec) for source in registry.sources.values() for spec in source.files]
    specs.sort(key=lambda pair: -(pair[1].glob or pair[1].paths[0]).count("/"))
    made = 0
    for source, spec in specs:
        base = root / source.raw_dir
        names = [_instance(spec.glob, n) for n in range(spec.min_count)] if spec.glob else [spec.paths[0]]
        for name in names:
            path = base / name
            if not os.path.lexists(path):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
                made += 1
        if spec.glob:  # the stubs satisfy the registry's count
            found = glob.glob(os.path.join(glob.escape(str(base)), spec.glob), recursive=True)
            assert len(found) >= spec.min_count, (source.id, spec.glob)
    return made


@pytest.fixture(scope="module")
def full_size(tmp_path_factory):
    # the 215,000 stubs in memory where the machine has a tmpfs: making, walking and removing them on disk was
    # most of this file's time (docs/tests.md)
    shm = Path("/dev/shm")
    in_memory = shm.is_dir() and os.access(shm, os.W_OK)
    folder = (
        Path(tempfile.mkdtemp(prefix="medheb-full-size-", dir=shm))
        if in_memory
        else tmp_path_factory.mktemp("full-size")
    )
    document = yaml.safe_load((DATASETS_DIR / "ct_rate" / "sources.yaml").read_text())
    files = [
        {**spec, "min_count": CT_RATE_TRAIN_VOLUMES} if spec["id"] == "train_volumes" else spec
        for spec in document["sources"]["ct_rate"]["files"]
    ]
    overrides = folder / "overrides.yaml"
    overrides.write_text(yaml.safe_dump({"sources": {"ct_rate": {"files": files}}}))
    values = {
        "raw_root": str(folder / "raw"),
        "data_basedir": str(folder / "DATA_BASEDIR"),
        "registry_overrides": str(overrides),
        "subsets": "all",
        "splits": "all",
    }
    (folder / "DATA_BASEDIR").mkdir()
    config = folder / "config.yaml"
    config.write_text(yaml.safe_dump(values))
    made = _full_size_root(folder / "raw", load_registry(overrides))
    yield folder, config, settings_from_dict(values), made
    # about 215,000 files and folders: removed here, on the worker, not left to the clean-up of old test folders
    # that pytest runs at the end of a later session
    shutil.rmtree(folder if in_memory else folder / "raw")


@pytest.mark.registry_wide
def test_plan_command_plans_a_full_size_raw_root(full_size, tmp_path):
    _, config, _, made = full_size
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "preprocess", "plan", "--config", str(config), "--cores", "1", "32", "256"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    seconds = time.monotonic() - started
    print(f"plan on a synthetic full-size raw root ({made:,} stub files): {seconds:.2f} s")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    headers = ["subset", "split", "items", "files", "size", "core-hours", "jobs", "counted", "buildable"]
    assert lines[0].split() == headers
    ct_rate = next(line.split() for line in lines if line.startswith("3D_Task/CT_RATE "))
    assert ct_rate[1:3] == ["test", "1,304"]  # the valid_fixed `_1` volumes the registry counts
    table = lines[: lines.index("")]
    assert table[-1].startswith(("total", "not built"))  # what will be built, then apart what will not
    assert any(line.startswith("total ") and line.endswith("what will be built") for line in table)
    # the budget of the whole selection: test, then every split; wall time on 1, 32 and 256 cores
    budget = lines[lines.index(table[-1]) + 3 :]
    assert budget[0].split("  ")[0] == "splits" and "wall min SLURM (bound)" in budget[0]
    rows = [line.split() for line in budget[2:8]]
    assert [row[:2] for row in rows] == [[s, n] for s in ("test", "all") for n in ("1", "32", "256")]
    for splits in ("test", "all"):
        walls = [float(row[-4].replace(",", "")) for row in rows if row[0] == splits]  # local, 1/32/256 cores
        assert len(walls) == 3 and walls[0] > walls[1] >= walls[2] > 0  # falls as the cores grow
        one = next(row for row in rows if row[:2] == [splits, "1"])
        assert walls[0] >= float(one[3].replace(",", "")) * 60 / 2  # one core: a job of 2 threads holds it alone


@pytest.fixture(scope="module")
def full_estimate(full_size):
    """The estimate of every planned conversion at full counts (the shipped costs), made once: counting the
    stubs is most of its time."""
    _, _, settings, _ = full_size
    registry = settings.registry()
    started = time.monotonic()
    found = estimate.estimate(settings, registry, estimate.planned_conversions(settings, registry), load_costs())
    print(f"estimate with CT-RATE train: {time.monotonic() - started:.2f} s")
    return settings, registry, found


def test_train_split_is_cut_into_hour_long_jobs(full_estimate):
    _, registry, found = full_estimate
    costs = load_costs()
    train = next(e for e in found if e.conversion == "volumes_train")
    assert train.items == CT_RATE_TRAIN_VOLUMES and train.split == "train"
    cost = costs["volume_slices/ct_rate"]
    speedup = registry.kinds["volume_slices"].resources["speedup"]  # of its two threads, measured
    # jobs of at most an hour, start-up included, on the kind's threads
    hour_long = math.ceil(CT_RATE_TRAIN_VOLUMES * cost.seconds / speedup / (3600 - cost.startup_seconds))
    assert train.jobs == max(registry.subset("3D_Task/CT_RATE").conversions[0].shards, hour_long)
    assert train.files == round(CT_RATE_TRAIN_VOLUMES * costs["volume_slices/ct_rate"].files)
    total = sum(e.jobs for e in found)
    print(f"jobs: {total:,} for {sum(e.items for e in found):,} items")
    assert 100 <= total <= 3000  # hundreds to low thousands, not one per volume
    assert train.jobs < train.items / 100


@pytest.mark.workflow
def test_the_workflow_cuts_train_conversions_as_the_plan_does(full_size):
    _, _, settings, _ = full_size
    registry = settings.registry()
    subset, conversion = next(
        (s, c) for s, c in estimate.planned_conversions(settings, registry) if c.name == "volumes_train"
    )
    jobs = sharding.shard_count(settings, registry, subset, conversion)
    assert jobs == next(e.jobs for e in estimate.estimate(settings, registry, [(subset, conversion)]))
    named = settings_from_dict({**_values(settings), "shards": {"3D_Task/CT_RATE/volumes_train": 7}})
    assert sharding.shard_count(named, registry, subset, conversion) == 7  # the config's count wins
    assert sharding.shard_count(settings, registry, subset, subset.conversions[0]) == 40  # test: the registry's


@pytest.mark.registry_wide
def test_every_job_stays_under_the_target_at_full_counts(full_estimate):
    settings, registry, found = full_estimate
    assert {e.split for e in found} == {"test", "train"}
    for e in found:
        longest = max(e.job_seconds())
        assert longest <= 3600, (e.subset, e.conversion, e.jobs)  # an hour on the job's threads
        assert e.runtime * 60 >= 2 * longest and e.runtime >= 10  # declared: twice the predicted at least
    workflow = {e.subset + "/" + e.conversion: e for e in found}
    for subset, conversion in estimate.planned_conversions(settings, registry)[::7]:
        if registry.kinds[conversion.kind].module is None:
            continue
        shards = sharding.shard_count(settings, registry, subset, conversion)
        declared = sharding.job_resources(settings, registry, subset, conversion, shards)
        planned = workflow[f"{subset.key}/{conversion.name}"]
        assert (declared.mem_mb, declared.runtime, shards) == (planned.mem_mb, planned.runtime, planned.jobs)


def test_a_test_conversion_longer_than_the_target_is_cut(full_size):
    _, _, settings, _ = full_size
    registry = settings.registry()
    subset = registry.subset("2D_Task/VindrCXR")
    conversion = next(c for c in subset.conversions if c.split == "test")
    costs = dict(load_costs())
    slow = cost_key(registry, subset, conversion)
    costs[slow] = replace(costs[slow], seconds=10.0, startup_seconds=0.0)  # 3,000 images: 30,000 s on one core
    items = count_items(registry, settings.raw_root, subset, conversion)
    assert sharding.shard_count(settings, registry, subset, conversion, costs) == math.ceil(items * 10.0 / 3600)
    one = sharding.job_resources(settings, registry, subset, conversion, 1, costs=costs)
    nine = sharding.job_resources(settings, registry, subset, conversion, 9, costs=costs)
    assert nine.runtime < one.runtime  # a shard's runtime follows its items


@pytest.mark.registry_wide
def test_plan_json_lists_each_conversion(tmp_path):
    """Which conversions `plan --json` lists, and their splits, come from the registry: an empty raw root (every
    count the registry's) lists the same rows as the full-size one, without counting 118,000 stubs again."""
    values = {"raw_root": str(tmp_path / "raw"), "data_basedir": str(tmp_path / "data"), "splits": "all"}
    (tmp_path / "raw").mkdir()
    (tmp_path / "data").mkdir()
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({**values, "subsets": "all"}))
    done = subprocess.run(
        [sys.executable, "-m", "preprocess", "plan", "--config", str(config), "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    silver = next(r for r in rows if r["conversion"] == "silver_crops")
    assert silver["split"] == "train" and silver["subset"] == "2D_Task/ChestImagrome"


def _values(settings) -> dict:
    return {
        "raw_root": str(settings.raw_root),
        "data_basedir": str(settings.data_basedir),
        "registry_overrides": str(settings.registry_overrides),
        "subsets": "all",
        "splits": "all",
    }
