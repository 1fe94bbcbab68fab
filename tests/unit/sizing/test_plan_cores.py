"""Jobs sized to the cores a run has (issue 42, item 3): at the registry's full counts (nothing downloaded,
every split) the conversions are cut for each core count so that the predicted wall time approaches its lower
bound, max(core-seconds / N, the longest item) plus SLURM's per-job wait, without jobs so short that the wait
dominates. The bars are the issue's; the figures are the model's arithmetic (docs/benchmarks.md), no timing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from conftest import REPO
from preprocess.pipeline.sizing import estimate_build
from preprocess.registry import splits
from preprocess.registry.config import settings_from_dict
from preprocess.sizing import allocation, budget, resources, shards, stages, targets, verifyjobs
from preprocess.sizing.estimate import at_target

CORES = [32, 256, 1024]


@pytest.fixture(scope="module")
def full_counts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nothing-downloaded")
    values = {"raw_root": str(folder / "raw"), "data_basedir": str(folder / "data"), "subsets": "all", "splits": "all"}
    (folder / "raw").mkdir()
    (folder / "data").mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump(values))
    os.environ.pop("MEDHEB_EXTRA_REGISTRY", None)  # the shipped registry, whose full counts the README states
    settings = settings_from_dict(values)
    registry = settings.registry()
    found = estimate_build(settings, registry)
    return folder, settings, registry, found, {(b["splits"], b["cores"]): b for b in budget.totals(found, CORES)}


def test_the_issues_bars_hold_for_every_split(full_counts):
    *_, budgets = full_counts
    at = {n: budgets["all", n] for n in CORES}
    wait = allocation.SLURM_JOB_SECONDS / 3600
    assert at[256]["core_hours"] == pytest.approx(19.2, abs=0.05)  # the README's full benchmark
    assert at[256]["slurm"] <= 0.25  # 15 minutes
    assert at[256]["slurm_bound"] == pytest.approx(at[256]["core_hours"] / 256 + wait)  # the work, not an item
    assert at[32]["slurm"] <= 1.2 * (at[32]["core_hours"] / 32 + wait)
    assert at[1024]["slurm"] <= at[256]["slurm"]
    for n in CORES:  # no schedule beats its bound, locally or on SLURM
        assert at[n]["local"] >= at[n]["local_bound"] - 1e-9 and at[n]["slurm"] >= at[n]["slurm_bound"] - 1e-9


def test_the_whole_build_overlaps_its_stages(full_counts):
    *_, budgets = full_counts
    build = {n: budgets["all", n]["build"] for n in CORES}
    wait = allocation.SLURM_JOB_SECONDS / 3600
    # the issue's bars, held by every stage from the checks to the evaluation configs as well
    assert build[256]["slurm"] <= 0.25  # 15 minutes
    assert build[32]["slurm"] <= 1.2 * (build[32]["core_hours"] / 32 + wait)
    assert build[1024]["slurm"] <= build[256]["slurm"]
    # one subset's fingerprints beside another's conversions: sooner than the stages one after another
    in_turn = sum(w["slurm"] for w in budgets["all", 256]["stages"].values())
    assert build[256]["slurm"] < 0.8 * in_turn
    for n in CORES:
        assert (
            build[n]["slurm"] >= build[n]["slurm_bound"] - 1e-9 and build[n]["local"] >= build[n]["local_bound"] - 1e-9
        )
        assert build[n]["core_hours"] == pytest.approx(
            sum(w["core_hours"] for w in budgets["all", n]["stages"].values())
        )


def test_at_256_cores_the_conversions_stay_within_one_and_a_half_of_their_bound(full_counts):
    *_, budgets = full_counts
    conversions = budgets["all", 256]
    assert conversions["slurm"] <= 1.5 * conversions["slurm_bound"]


@pytest.mark.xfail(
    strict=True,
    reason="at 19.2 core-hours (CT-RATE's train count halved by issue 52, MMDental 54x cheaper by issue 50) the "
    "whole build at 256 cores is 10.5 min against a 6.7 min bound, 1.57x: the validation and fingerprint stages, "
    "which start once a subset's conversions end, no longer hide behind a long conversion stage; still to do",
)
def test_at_256_cores_the_whole_build_stays_within_one_and_a_half_of_its_bound(full_counts):
    *_, budgets = full_counts
    build = budgets["all", 256]["build"]
    assert build["slurm"] <= 1.5 * build["slurm_bound"]


def test_the_cut_follows_the_cores_and_never_makes_jobs_too_short(full_counts):
    _, _, _, found, budgets = full_counts
    assert budgets["all", 32]["jobs"] < budgets["all", 256]["jobs"]  # more cores: finer
    assert budgets["all", 32]["target_seconds"] > budgets["all", 256]["target_seconds"]
    for n in CORES:
        target = budgets["all", n]["target_seconds"]
        assert allocation.MIN_JOB_SECONDS <= target <= resources.JOB_SECONDS
        for e in found:
            if e.cutting is None:
                continue
            jobs = e.cutting.jobs(target)
            seconds = [s for s, _ in e.cutting.job_list(target)]
            assert max(seconds) <= target or jobs == e.cutting.least, (e.subset, e.conversion)
            if jobs > e.cutting.least:  # cut for the cores: each job more than half the target, 150 s at least
                assert min(seconds) > target / 2 >= allocation.MIN_JOB_SECONDS / 2, (e.subset, e.conversion, n)


def test_the_workflow_cuts_as_the_plan_predicts(full_counts):
    _, settings, registry, found, budgets = full_counts
    target = targets.build_targets(settings, registry, 256).convert  # what common.smk computes for --cores 256
    assert target == budgets["all", 256]["target_seconds"]
    subset = registry.subset("3D_Task/CT_RATE")
    train = next(c for c in splits.conversions(settings, subset) if c.name == "volumes_train")
    planned = next(e for e in found if e.subset == subset.key and e.conversion == "volumes_train")
    assert shards.shard_count(settings, registry, subset, train, target=target) == planned.cutting.jobs(target)
    # 24,128 volumes x 0.7353 s / 1.8 on 2 threads = 9,856 s, in jobs of 300 s (the 256-core target at the
    # README's 19.2 core-hours, the floor) less a 0.91 s start-up: 33, fewer than its 40 shards (subsets.yaml)
    assert target == allocation.MIN_JOB_SECONDS and planned.cutting.jobs(target) == 40


def test_a_second_core_is_held_only_where_it_pays(full_counts):
    *_, registry, _, _ = full_counts
    # kinds.yaml: two MedMNIST workers ran 1.17x one (a second core 58% busy); two volume workers 1.8x (90%)
    assert resources.kind_threads(registry.kinds["npz_unpack_2d"]) == (1, 1.0)
    assert resources.kind_threads(registry.kinds["volume_slices"]) == (2, 1.8)


def test_plan_prints_each_wall_next_to_its_lower_bound(full_counts, tmp_path):
    folder, *_ = full_counts
    done = subprocess.run(
        [sys.executable, "-m", "preprocess", "plan", "--config", str(folder / "config.yaml")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**{k: v for k, v in os.environ.items() if k != "MEDHEB_EXTRA_REGISTRY"}, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("splits "))
    assert header.split()[:3] == ["splits", "cores", "jobs"]
    assert header.endswith("wall min SLURM (bound)  whole build min local / SLURM (bound)")
    rows = [line.split() for line in lines if line.startswith(("test ", "all "))]
    assert [row[:2] for row in rows] == [[s, f"{n:,}"] for s in ("test", "all") for n in CORES]  # the default
    for row in rows:  # "5.4 (4.9)": the conversions' prediction in minutes, then its bound in brackets
        local, bound, slurm, slurm_bound = row[-8:-4]
        assert float(local) >= float(bound.strip("()"))
        assert bound.startswith("(") and slurm_bound.endswith(")")
        assert float(slurm) >= float(slurm_bound.strip("()"))
        whole_local, slash, whole_slurm, whole_bound = row[-4:]  # the whole build: "11.4 / 13.4 (9.3)"
        assert slash == "/" and float(whole_slurm) >= float(whole_bound.strip("()")) and float(whole_local) > 0


def test_every_stage_is_in_the_plan_priced_per_item(full_counts):
    _, _, registry, found, budgets = full_counts
    checks = {e.subset: e for e in found if e.stage == "check"}
    # the MedMNIST 3D archives at 64 px (sources.yaml): (971+161+610 + 1158+165+310 + 1230+177+352) volumes of
    # 64^3 bytes each, MD5'd at the measured rate from the disk (649.7 MB/s); three files of 449 MB on average,
    # under the 512 MB a file the 2-thread speed-up was measured on (stage_costs.yaml md5_parallel): one thread,
    # 0.5 + 1,345.8 MB / 649.7 MB/s
    hashed = (971 + 161 + 610 + 1158 + 165 + 310 + 1230 + 177 + 352) * 64**3
    assert checks["medmnist3d"].threads == 1
    assert checks["medmnist3d"].core_hours * 3600 == pytest.approx(
        stages.STARTUP_SECONDS + hashed / 1e6 / 649.7, rel=0.01
    )
    assert checks["aptos2019"].core_hours * 3600 < 1  # no MD5: a presence check of its files
    for group in ("test", "all"):
        walls = budgets[group, 256]["stages"]
        assert list(walls) == ["check", "convert", "validate", "attest", "contact", "run"]
        image_subsets = {s.key for s in registry.select("all") if not s.is_text and s.tasks}
        # a subset's shards, then its merge: two jobs a subset at least
        assert walls["validate"]["jobs"] >= 2 * len(image_subsets) and walls["attest"]["jobs"] >= 2 * len(image_subsets)
        assert walls["contact"]["jobs"] == len(image_subsets)  # a contact sheet a subset
        # the plan checkpoint, the fingerprints' table, the summary, its gate and the evaluation configs
        assert walls["run"]["jobs"] == 5
        assert walls["attest"]["core_hours"] > walls["validate"]["core_hours"] > 0  # decoding costs more


def test_no_validation_or_fingerprint_job_outlasts_its_declared_runtime(full_counts):
    _, settings, registry, found, _ = full_counts
    chosen = targets.build_targets(settings, registry, 256)  # what common.smk computes for --cores 256
    target = chosen.verify  # a verification shard's: a half or a quarter of the conversions' at most
    assert targets.MIN_VERIFY_SECONDS <= target <= chosen.convert <= 400  # 300 s (the floor) at 19.2 core-hours
    cut = {}
    for subset in registry.select("all"):
        for stage, one in verifyjobs.subset_verifications(settings, registry, subset).items():
            count = cut[subset.key, stage] = one.shards(target)
            assert max(one.shard_seconds(count)) <= one.shard_resources(count).runtime * 60, (subset.key, stage)
            assert one.merge_seconds <= one.merge_resources().runtime * 60, (subset.key, stage)
            if count > 1:  # cut for the cores: no shard past the target, so none declares more than 3 x 400 s
                assert max(one.shard_seconds(count)) <= target and one.shard_resources(count).runtime <= 20
    # the plan counts the workflow's cut: a subset's shards as one estimate, its merge as another
    converted = [at_target(e, chosen.convert) for e in found if e.stage == "convert"]
    for e in stages.subset_estimates(converted, target):
        assert e.jobs == (cut[e.subset, e.stage] if e.conversion == "shards" else 1), (e.subset, e.stage)
    # CT-RATE's fingerprints were one job of 397 predicted minutes (240 declared): now many, each within the target
    assert cut["3D_Task/CT_RATE", "attest"] > 1
