"""What the Snakemake workflow (Snakefile, workflow/rules/*.smk) asks of the pipeline before and while it
plans its jobs: the checked settings, the sources and conversions a run has, the jobs' sizes, the files a
rule reads. The rules import this module and preprocess.errors only; the steps they run are
preprocess/pipeline/snakemake_entry.py's."""

from __future__ import annotations

from pathlib import Path

from preprocess.pipeline import runview
from preprocess.pipeline.settings import workflow_settings
from preprocess.rawdata.rawcheck import fingerprint
from preprocess.registry import layout, splits
from preprocess.registry.config import check_config
from preprocess.registry.model import GROUPS
from preprocess.release import releasenames
from preprocess.sizing import allocation, checkjobs, shards, targets, verifyjobs
from preprocess.sizing.resources import rule_resources

RESULTS = layout.RESULTS

# The names the rules use (layout: every output path; GROUPS: the task groups; check_config: the config file
# checked before anything runs; rule_resources: the fixed sizes of the rules that convert nothing).
__all__ = [
    "GROUPS",
    "RESULTS",
    "build_targets",
    "built_conversions",
    "check_config",
    "check_threads",
    "checked_sources",
    "count_shards",
    "job_group",
    "job_resources",
    "layout",
    "raw_fingerprint",
    "record_files",
    "rule_resources",
    "task_files",
    "verification",
    "workflow_settings",
]


def checked_sources(settings, registry, results: Path, selected: list[str]) -> list[str]:
    """The sources whose check reports a run writes: the selected subsets', and on a partial run those earlier
    runs checked (runview.py), redone when out of date, never trusted stale."""
    before = runview.checked_before(registry, results) if runview.partial(settings, results) else []
    return sorted(set(selected).union(before))


def raw_fingerprint(settings, registry, source_id: str) -> str:
    """What could change the check of a source: the stats of the files its check looks for."""
    return fingerprint(splits.checked_source(registry, settings, registry.source(source_id)), settings.raw_root)


def check_threads(settings, registry, source_id: str) -> int:
    """The threads of a source's check job: one a download it hashes, up to what pays (sizing/checkjobs.py)."""
    return checkjobs.source_threads(settings, registry, source_id)


def built_conversions(settings, subset) -> list:
    """The conversions a build runs for the subset (its train ones with splits: all)."""
    return splits.conversions(settings, subset)


def build_targets(settings, registry, cores: int | None) -> targets.Targets:
    """The seconds the build's conversions (`convert`) and its validation and fingerprint shards (`verify`)
    are cut to on `cores` (sizing/targets.py)."""
    return targets.build_targets(settings, registry, cores)


def count_shards(settings, registry, subset, conversion, target: float | None = None) -> int:
    """Jobs for one conversion, cut to `target` seconds (sizing/shards.py)."""
    return shards.shard_count(settings, registry, subset, conversion, target=target)


def job_group(settings, registry, subset, conversion, count: int) -> str | None:
    """The SLURM job group of a conversion's jobs when it is cut into `count`: the short ones travel together."""
    seconds = shards.job_seconds(settings, registry, subset, conversion, count)
    return allocation.SMALL_JOBS if seconds < allocation.GROUP_BELOW_SECONDS else None


def job_resources(settings, registry, subset, conversion, count: int):
    """threads, mem_mb and runtime of the conversion's largest shard (sizing/shards.py)."""
    return shards.job_resources(settings, registry, subset, conversion, count)


def verification(settings, registry, subset, stage: str):
    """The subset's validation or fingerprints (stage validate, attest) as jobs: its shards for a target,
    what each declares, its merge's (sizing/verifyjobs.py)."""
    return verifyjobs.subset_verifications(settings, registry, subset)[stage]


def record_files(settings, subset, side: str) -> list[str]:
    """The release files whose records name a record-driven conversion's outputs."""
    return [str(path) for path in releasenames.release_files(settings.data_basedir, subset, side)]


def task_files(settings, subset) -> list[str]:
    """The subset's task files that are in DATA_BASEDIR."""
    return [str(path) for path in layout.task_files(settings.data_basedir, subset) if path.exists()]
