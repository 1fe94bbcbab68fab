"""The demo, train split included (`splits: all`), built through the SLURM profile equals the local build byte
for byte, and every Train_Data JSONL path resolves. The SLURM build is cut for its allocation (config `cores:`,
the node's two CPUs) and sends its short jobs in groups (profiles/slurm-ci: small_jobs, checks, verify);
every SLURM job's declared memory and time cover what it used, as SLURM's accounting recorded it (issue 42).

Needs a running cluster (`.ci/slurm.sh start`, as `make slurm-test` and CI do); skipped elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from digests import tree_digests
from preprocess.demo import write_demo
from preprocess.pipeline.settings import workflow_settings
from preprocess.pipeline.workflow import RESULTS, job_group
from preprocess.registry import splits

pytestmark = pytest.mark.skipif(
    os.environ.get("MEDHEB_SLURM") != "1", reason="set MEDHEB_SLURM=1 with a running cluster (make slurm-test)"
)


def _start(workdir: Path, *options: str) -> subprocess.Popen:
    """Snakemake started on a fresh demo in `workdir`, its output going to files there (a pipe left unread would
    stop it once full)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text((REPO / "config.yaml").read_text())
    write_demo(workdir / "demo")  # as `make demo` does before it runs Snakemake
    command = ["timeout", "-s", "INT", "-k", "60", "1800", sys.executable, "-m", "snakemake"]
    command += ["-s", str(REPO / "Snakefile"), "--directory", str(workdir), *options]
    with open(workdir / "stdout.txt", "w") as stdout, open(workdir / "stderr.txt", "w") as stderr:
        return subprocess.Popen(command, stdout=stdout, stderr=stderr, start_new_session=True)


def _finish(process: subprocess.Popen, workdir: Path) -> None:
    """Wait for a build `_start` started; it must succeed."""
    process.wait()
    stdout, stderr = ((workdir / f"{name}.txt").read_text() for name in ("stdout", "stderr"))
    assert process.returncode == 0, stdout[-3000:] + stderr[-5000:]


def _tree(workdir: Path) -> dict[str, str]:
    """Every file of the built DATA_BASEDIR by content; links by their target relative to the workdir."""
    return tree_digests(workdir / "demo" / "DATA_BASEDIR", links_from=workdir)


NODE_CORES = 2  # .ci/slurm.sh's node: the allocation the SLURM build is cut for (config `cores:`)
UNITS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}  # sacct's memory units, in MB (--units=M: M)


def _megabytes(text: str, cpus: int) -> float | None:
    """MB of a sacct memory field ('2000M', '52.34M'; before Slurm 23 '2000Mn' per node, '1000Mc' per CPU);
    None when empty (a job's allocation line has no MaxRSS, nor a step too short for a sample)."""
    found = re.fullmatch(r"([0-9.]+)([KMGT]?)([nc]?)", text)
    if not found:
        return None
    value = float(found[1]) * UNITS[found[2] or "M"]
    return value * cpus if found[3] == "c" else value


def _seconds(text: str) -> float | None:
    """Seconds of a sacct time field ([D-]HH:MM:SS or MM:SS); None for UNLIMITED and the like."""
    days, _, clock = text.rpartition("-")
    parts = clock.split(":")
    if not all(re.fullmatch(r"[0-9.]+", part) for part in parts):
        return None
    return sum(float(part) * 60**k for k, part in enumerate(reversed(parts))) + (int(days) * 86400 if days else 0)


def _accounting(before: set[str]) -> dict[str, dict]:
    """Every SLURM job not in `before` (job ids): its state, declared memory (MB) and time limit (s), elapsed
    seconds and the MaxRSS (MB) of each of its steps that has one."""
    fields = "JobID,State,AllocCPUS,ReqMem,Timelimit,Elapsed,MaxRSS"
    lines = subprocess.run(
        ["sacct", "-n", "-P", "--units=M", "-o", fields], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    jobs: dict[str, dict] = {}
    for line in lines:
        job_id, state, cpus, requested, limit, elapsed, rss = line.split("|")
        main, _, step = job_id.partition(".")
        if main in before:
            continue
        job = jobs.setdefault(main, {"rss": [], "batch_rss": 0.0, "steps": 0})
        if not step:  # the job's own line: what it declared
            job.update(state=state, mem_mb=_megabytes(requested, int(cpus or 1)), limit_s=_seconds(limit))
            job["elapsed_s"] = _seconds(elapsed)
        elif step == "batch":  # the job's Snakemake, beside its steps all along
            job["batch_rss"] = _megabytes(rss, 1) or 0.0
        elif step.isdigit():  # a step: one rule's job (srun)
            job["steps"] += 1
            if _megabytes(rss, 1):  # sampled
                job["rss"].append(_megabytes(rss, 1))
    return jobs


def _used_mb(job: dict) -> float:
    """The most a job can have held at once: its Snakemake and its two largest steps (`cores: 2` runs a group's
    jobs at most two at a time on the node's two CPUs)."""
    return job["batch_rss"] + sum(sorted(job["rss"])[-NODE_CORES:])


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> tuple[Path, dict, Path]:
    """The demo, all splits, through profiles/slurm-ci cut for the node's cores, and SLURM's record of its jobs;
    and the same demo built locally (`--cores 2`) meanwhile: the local build uses the cores while the SLURM build
    waits on SLURM's scheduling and its own status polling (the local build alone took 2.3 minutes after it)."""
    workdir, local = tmp_path_factory.mktemp("slurm"), tmp_path_factory.mktemp("local")
    before = set(subprocess.run(["sacct", "-n", "-X", "-o", "JobID"], capture_output=True, text=True).stdout.split())
    profile = ["--profile", str(REPO / "profiles" / "slurm-ci")]
    local_build = _start(local, "--cores", "2", "--config", "splits=all")
    try:
        _finish(_start(workdir, *profile, "--config", "splits=all", f"cores={NODE_CORES}"), workdir)
        _finish(local_build, local)
    finally:
        if local_build.poll() is None:  # the SLURM build failed: stop the local one too
            os.killpg(local_build.pid, signal.SIGINT)
            local_build.wait()
    return workdir, _accounting(before), local


@pytest.fixture(scope="module")
def slurm_build(builds) -> tuple[Path, dict]:
    return builds[:2]


def test_slurm_build_equals_local_build(builds):
    workdir, jobs, local_workdir = builds
    local, cluster = _tree(local_workdir), _tree(workdir)
    assert len(local) > 500
    assert cluster == local
    summary = json.loads((workdir / "results" / "validation" / "summary.json").read_text())
    train = [row for row in summary["files"] if row["file"].startswith("Train_Data/")]
    train = [row for row in train if not row["subset"].startswith("Text_Task/")]  # a text file names no image
    assert len(train) >= 5 and all(row["ok"] == row["paths"] > 0 and not row["not_built"] for row in train)
    assert summary["unproduced"] == [] and summary["failed"] == []
    steps = sum(job["steps"] for job in jobs.values())
    print(f"{len(jobs)} SLURM jobs, {steps} steps: " + ", ".join(sorted({job["state"] for job in jobs.values()})))
    # the whole demo: every job of the rules that are no localrules (a log each) ran as a step of a SLURM job
    sent = [
        log for stage in ("check", "convert", "validate", "attest") for log in (workdir / "logs" / stage).rglob("*.log")
    ]
    assert len(sent) > 200 and steps >= len(sent)
    assert {job["state"] for job in jobs.values()} == {"COMPLETED"}


def test_short_jobs_travel_in_groups(slurm_build):
    """The plugin keeps each SLURM job's log under group_GROUP_RULES/ or rule_RULE/WILDCARDS/
    (slurm-keep-successful-logs; a group's folder names its rules in lexicographic order): the checks and the
    validation and fingerprint steps went only as groups, and a convert job went alone only where the plan
    predicts it at least GROUP_BELOW_SECONDS (its group is None: job_group, the rule's own choice), the others in
    groups of up to eight components."""
    workdir, _ = slurm_build
    logs = workdir / ".snakemake" / "slurm_logs"
    folders = {folder.name for folder in logs.iterdir()}
    assert {"group_small_jobs_convert", "group_checks_check_source"} <= folders, folders
    # a built subset's four verification steps are one component: validated, then fingerprinted
    assert "group_verify_attest_shard_attest_subset_validate_shard_validate_subset" in folders, folders
    assert {folder for folder in folders if folder.startswith("rule_")} <= {"rule_convert"}, folders
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config.update(splits="all", cores=NODE_CORES)
    cwd = os.getcwd()
    os.chdir(workdir)  # the config's folders are relative to the run's directory
    try:
        settings, registry = workflow_settings(config, RESULTS)
    finally:
        os.chdir(cwd)
    alone = {folder.name for folder in (logs / "rule_convert").iterdir()} if "rule_convert" in folders else set()
    long = set()  # the plugin's folder name of each convert job the rule puts in no group
    shards = sorted((workdir / "results" / "convert").rglob("*.tsv"))  # GROUP/FOLDER/CONVERSION.I-of-N.tsv
    for manifest in shards:
        conversion_name, _, cut = manifest.name.removesuffix(".tsv").rpartition(".")
        shard, _, count = cut.partition("-of-")
        subset = registry.subset(f"{manifest.parent.parent.name}/{manifest.parent.name}")
        conversion = next(c for c in splits.conversions(settings, subset) if c.name == conversion_name)
        if job_group(settings, registry, subset, conversion, int(count)) is None:
            long.add(f"{subset.key.replace('/', '_')}_{conversion_name}_{shard}_{count}")
    assert alone == long
    grouped = list((logs / "group_small_jobs_convert").glob("*.log"))
    assert len(grouped) < len(shards) - len(long)  # fewer SLURM jobs than the short convert jobs they carried


def test_every_slurm_job_declares_the_memory_and_time_it_used(slurm_build):
    """Per SLURM job (a group's jobs counted together, as SLURM sees them): its elapsed time within its --time,
    and the MaxRSS of its Snakemake (the batch step) and of its two largest steps within its --mem. Elapsed is
    exact. MaxRSS is sampled (jobacct_gather/linux polls every JobAcctGatherFrequency seconds, 1 on
    .ci/slurm.sh's node): a step that ends before a sample has no figure, or one under its true peak, so such a
    figure can only understate the use and the check proves the jobs whose peak was sampled. The demo's jobs
    last seconds; each runs a Python with numpy loaded (well over 30 MB), so a figure under that is a sample of
    a job's first instant, and at least half the jobs must have a step sampled above it for the check to mean
    anything (a Snakemake benchmark file once showed 0.6 MB for such a job)."""
    _, jobs = slurm_build
    table = "\n".join(
        f"{job_id}: {_used_mb(job):.0f} of {job['mem_mb']:.0f} MB, {job['elapsed_s']:.0f} of {job['limit_s']:.0f} s"
        for job_id, job in sorted(jobs.items())
    )
    print(f"{len(jobs)} SLURM jobs (MaxRSS of its Snakemake and two largest steps; Elapsed):\n{table}")
    for job_id, job in jobs.items():
        assert job["limit_s"] is not None and job["elapsed_s"] <= job["limit_s"], (job_id, job)
        assert _used_mb(job) <= job["mem_mb"], (job_id, job)
    meaningful = [job for job in jobs.values() if max(job["rss"] or [0]) > 30]
    assert len(meaningful) >= len(jobs) / 2, table
