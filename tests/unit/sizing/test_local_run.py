"""A local run's predicted wall holds what Snakemake itself costs (issue 42, item 5; docs/benchmarks.md,
"Predicted against measured wall"): each job holds its cores LOCAL_JOB_SECONDS beyond its own start-up and
work, the run starts in LOCAL_START_SECONDS and runs its own steps one after another, and every built subset
gets a contact sheet. Figures by hand from those constants."""

from __future__ import annotations

import pytest

from preprocess.sizing import allocation, budget, stages, verifyjobs
from preprocess.sizing.estimate import Estimate

HOUR = 3600


def _conversion(subset: str, jobs: int, seconds: float, files: int = 8, size: int = 8 * 70_402) -> Estimate:
    """A conversion of `jobs` jobs of `seconds` each (start-up 0, one item a job)."""
    return Estimate(subset, "convert_it", "test", jobs, files, size, jobs * seconds / HOUR, jobs, item_seconds=seconds)


def test_each_local_job_holds_its_core_for_snakemakes_share_besides_its_own_work():
    (plan,) = budget.totals([_conversion("2D_Task/A", 4, 10.0)], [2])
    local = allocation.LOCAL_JOB_SECONDS
    # four 10 s jobs on two cores: two after two, each 10 s plus Snakemake's share
    assert plan["stages"]["convert"]["local"] * HOUR == pytest.approx(2 * (10.0 + local))
    assert plan["local"] * HOUR == pytest.approx(2 * (10.0 + local))
    # the bound: the work and the shares spread over the cores, plus one share
    assert plan["local_bound"] * HOUR == pytest.approx(4 * (10.0 + local) / 2 + local)
    # SLURM's jobs pay SLURM's start instead: four 10 s jobs are short, one group of them holding both cores
    assert plan["slurm"] * HOUR == pytest.approx(10.0 + allocation.SLURM_JOB_SECONDS)


def test_the_run_starts_then_its_own_steps_follow_one_after_another():
    (plan,) = budget.totals([_conversion("2D_Task/A", 1, 10.0)], [2])
    run = plan["stages"]["run"]
    # plan, fingerprints, validation_summary, validation_passed, eval_config: a job's start-up each, in turn
    each = stages.STARTUP_SECONDS + allocation.LOCAL_JOB_SECONDS
    assert run["jobs"] == 5
    assert run["local"] * HOUR == pytest.approx(allocation.LOCAL_START_SECONDS + 5 * each)
    assert run["slurm"] == run["local"]  # local rules, on the host Snakemake runs on
    (wide,) = budget.totals([_conversion("2D_Task/A", 1, 10.0)], [1024])
    assert wide["stages"]["run"]["local"] == run["local"]  # more cores do not shorten it


def test_every_built_subset_gets_a_contact_sheet_of_up_to_16_images():
    found = [
        _conversion("2D_Task/A", 1, 1.0, files=40, size=40 * 70_402),
        _conversion("2D_Task/B", 1, 1.0, files=3, size=3 * 70_402),
    ]
    (plan,) = budget.totals(found, [1])
    contact = plan["stages"]["contact"]
    assert contact["jobs"] == 2
    # 16 of A's 40 images and B's 3, each decoded at the fingerprints' cost of a 70,402-byte file (224 px RGB,
    # stage_costs.yaml), and a job's start-up each
    decode = verifyjobs.per_file("attest", 70_402)
    work = 2 * stages.STARTUP_SECONDS + (16 + 3) * decode
    assert contact["core_hours"] * HOUR == pytest.approx(work)
    assert contact["local"] * HOUR == pytest.approx(work + 2 * allocation.LOCAL_JOB_SECONDS)
