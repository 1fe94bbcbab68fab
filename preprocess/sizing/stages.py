"""The stages besides the conversions, in `plan` (issue 42, item 4), as the workflow runs them:

- the raw checks: one job per source (check_source), a presence check of its files (the registry's file
  counts) and the MD5 of every download that lists one (the npz archives; their bytes taken as their pixels,
  counts x size^dims x channels of the chosen variant: an upper bound of the deflated archive), hashed across
  files on the job's threads (checkjobs.py: one a hashed file, up to the measured count);
- the validation: per subset, shards that each check a slice of the paths its task files name
  (validate_shard), then one merge that writes its report (validate_subset);
- the fingerprints: per subset, shards on two threads that each decode and hash a slice of its images
  (attest_shard), then one merge that writes its file (attest_subset).

Each priced from benchmarks/stage_costs.py (stage_costs.yaml): MD5 MB/s from the disk and its speed-up on
several threads, seconds per file of a presence check, and per output file at real sizes validate's and
attest's seconds, interpolated by a file's bytes (a conversion's bytes per file, costs.yaml); the shards' walk
and the merges from benchmarks/verify_shards.py (shard_costs.yaml). The validation and the fingerprints follow
the conversions of the split group they are budgeted for, cut for the same cores (budget.py, verifyjobs.py)."""

from __future__ import annotations

from preprocess.sizing import checkjobs, verifyjobs
from preprocess.sizing.estimate import Estimate
from preprocess.sizing.resources import RULES
from preprocess.sizing.verifyjobs import STAGE_COSTS, STARTUP_SECONDS

__all__ = ["STAGE_COSTS", "check_estimates", "estimate_stages", "subset_estimates"]


def load() -> dict:
    return verifyjobs.load(STAGE_COSTS)


def _job(
    name: str, items: int, seconds: float, declared, *, conversion: str, stage: str, jobs: int = 1,
    startup: float = STARTUP_SECONDS, threads: int = 1, core_seconds: float | None = None,
) -> Estimate:  # fmt: skip
    """`jobs` jobs of `startup` seconds each, then their share of `items` at `seconds` each, on `threads`."""
    if core_seconds is None:
        core_seconds = threads * (jobs * startup + items * seconds)
    return Estimate(
        name,
        conversion,
        "test",
        items,
        0,
        0,
        core_seconds / 3600,
        jobs,
        threads=threads,
        mem_mb=declared.mem_mb,
        runtime=declared.runtime,
        startup_seconds=startup,
        item_seconds=seconds,
        counted="registry",
        stage=stage,
    )


def check_estimates(settings, registry) -> list[Estimate]:
    """One check job per source the selection reads: its presence check, then its MD5s on its threads. Its wall
    is presence + hashed MB / (MD5 MB/s x the speed-up at its threads), its core-seconds its threads x that."""
    costs = load()
    found = []
    for source_id in sorted({s for subset in registry.select(settings.subsets) for s in subset.source_ids}):
        source = registry.source(source_id)
        verify = settings.verifies_checksums(source_id)
        files = sum(max(1, spec.min_count or 1) for spec in source.files)
        threads = checkjobs.source_threads(settings, registry, source_id)  # as the workflow's job declares
        hashed = checkjobs.md5_bytes(source) if verify else 0
        rate = costs["md5_mb_per_s"] * checkjobs.speedup(threads)
        seconds = files * costs["presence_seconds_per_file"] + hashed / 1e6 / rate
        declared = RULES["check_source"]
        found.append(
            _job(
                source_id, files, seconds / max(1, files), declared, conversion="check", stage="check", threads=threads
            )
        )
    return found


def subset_estimates(conversions: list[Estimate], target: float | None = None) -> list[Estimate]:
    """Per subset of the converted estimates, its validation and its fingerprints (its files at their sizes),
    each cut into shards of at most `target` seconds (verifyjobs.py), then its merge."""
    outputs: dict[str, list[tuple[int, int]]] = {}
    for e in conversions:
        if e.stage == "convert" and e.files:
            outputs.setdefault(e.subset, []).append((e.files, e.bytes))
    found = []
    for subset in sorted(outputs):
        for v in verifyjobs.verifications(subset, outputs[subset]):
            jobs = v.shards(target)
            found.append(
                _job(subset, v.files, v.item_seconds, v.shard_resources(jobs), conversion="shards", stage=v.stage,
                     jobs=jobs, startup=v.fixed_seconds, threads=v.threads,
                     core_seconds=v.threads * sum(v.shard_seconds(jobs)))
            )  # fmt: skip
            merged = (v.merge_seconds - STARTUP_SECONDS) / max(1, v.files)
            found.append(_job(subset, v.files, merged, v.merge_resources(), conversion="merge", stage=v.stage))
    return found


def estimate_stages(settings, registry, conversions, plans=None) -> list[Estimate]:
    """The raw checks of the configured build (its validation and fingerprints follow the conversions of each
    split group: budget.py calls subset_estimates)."""
    return check_estimates(settings, registry)
