"""What one convert job asks SLURM (or the local scheduler) for, from what its shard holds: its items times the
measured per-item cost of preprocess/registry/costs.yaml, plus the job's start-up, times a safety factor; its
memory from the measured peak RSS at two job sizes. The same model cuts a conversion, test or train, into as
many shards as keep each job's predicted time under a target (allocation.py: from the cores, at most
JOB_SECONDS) and its memory under MEM_TARGET_MB. Called by the workflow (workflow/rules/*.smk) and by
`python -m preprocess plan`; the rules that convert nothing declare the fixed resources of RULES.

    runtime (minutes) = max(RUNTIME_FLOOR, ceil((startup + items x seconds / speedup) x SAFETY / 60)) x attempt
    mem_mb            = ceil(peak(items) x threads x MEM_FACTOR + MEM_BASE_MB) x attempt

`threads` and `speedup` (how much faster the job's threads run it than one core; measured, docs/benchmarks.md)
are the kind's, in kinds.yaml, where its second core pays (kind_threads: PAYS), else one thread. peak(items)
is one process's peak: the larger of the two measured peaks when they are flat (a rise within MEM_NOISE), else
the line through them. A job of N threads runs N processes (forked helpers), each counted whole: Snakemake's
benchmark files and a cgroup both see about that."""

from __future__ import annotations

import math
from dataclasses import dataclass

JOB_SECONDS = 3600  # no job's predicted time (start-up included) on its threads exceeds this
MEM_TARGET_MB = 16000  # nor its declared memory this, where the memory grows with the items of a job
SAFETY = 3  # declared runtime / predicted: the costs are medians on a loaded machine; a cluster core may be slower
RUNTIME_FLOOR = 10  # minutes: SLURM counts in minutes, and a job's environment takes some to start
MEM_FACTOR = 1.5  # declared memory / predicted peak, plus MEM_BASE_MB
MEM_BASE_MB = 500  # what a job may touch beyond the measured peak: the interpreter's pages, the file cache
# A rise of at most 10 MB or 20% between the two measured sizes (1x and 4x the items) is flat, the bar:
# it comes from the largest item a job happens to hold, not from how many it holds.
MEM_NOISE = (10, 0.2)


@dataclass(frozen=True)
class Resources:
    threads: int
    mem_mb: int
    runtime: int  # minutes

    def at(self, attempt: int) -> Resources:
        """Those of retry `attempt` (1: the first run): memory and time scaled by it, threads kept."""
        return Resources(self.threads, self.mem_mb * attempt, self.runtime * attempt)


# A job holds more than one core only where its measured speed-up keeps each core this busy: 2 threads need
# 1.5x. A core held idle is a core another job of a cluster allocation cannot have.
PAYS = 0.75


def kind_threads(kind) -> tuple[int, float]:
    """(threads, speedup) of a kind's jobs, from kinds.yaml's `resources` (speedup 1: no gain assumed): its
    threads where their measured speed-up pays for them (speedup / threads >= PAYS), else one thread."""
    threads = int(kind.resources.get("threads", 1))
    speedup = float(kind.resources.get("speedup", 1.0))
    if threads > 1 and speedup / threads < PAYS:
        return 1, 1.0
    return threads, speedup


def peak_mb(cost, items: int) -> float:
    """One process's peak RSS (MB) for a job of `items`, from the two measured job sizes."""
    measured = sorted((int(n), float(mb)) for n, mb in (cost.peak_rss_mb or {}).items())
    if not measured:
        return 0.0
    (small, low), (large, high) = measured[0], measured[-1]
    if large == small or high - low <= max(MEM_NOISE[0], MEM_NOISE[1] * low):
        return max(low, high)
    slope = (high - low) / (large - small)
    return high + slope * max(0, items - large)


def job_seconds(cost, items: int, speedup: float = 1.0) -> float:
    """Predicted seconds of a job of `items`: its start-up, then the items on its threads."""
    return cost.startup_seconds + items * cost.seconds / speedup


def shard_items(items: int, shards: int) -> int:
    """Items of a conversion's largest shard (position modulo the shard count)."""
    return math.ceil(items / max(1, shards))


def for_items(cost, items: int, threads: int = 1, speedup: float = 1.0) -> Resources:
    """The declared resources of a job of `items` at the first attempt."""
    seconds = job_seconds(cost, items, speedup)
    runtime = max(RUNTIME_FLOOR, math.ceil(seconds * SAFETY / 60))
    mem_mb = math.ceil(peak_mb(cost, items) * threads * MEM_FACTOR + MEM_BASE_MB)
    return Resources(threads, mem_mb, runtime)


def shards_for(items: int, cost, threads: int = 1, speedup: float = 1.0, target: float = JOB_SECONDS) -> int:
    """The fewest shards that keep each job's predicted seconds under `target` (at most JOB_SECONDS) and its
    declared memory under MEM_TARGET_MB."""
    work = min(target, JOB_SECONDS) - cost.startup_seconds
    per_job = math.floor(work * speedup / cost.seconds) if cost.seconds > 0 else items  # whole items a job holds
    # counted in whole items, so that the largest shard (items over shards, rounded up) stays within the target
    shards = max(1, math.ceil(items / per_job)) if work > 0 and per_job > 0 else items
    while shards < items and for_items(cost, shard_items(items, shards), threads).mem_mb > MEM_TARGET_MB:
        shards *= 2  # only where memory grows with the items: doubling reaches the bound in a few steps
    return max(1, min(shards, max(items, 1)))


# The rules that convert nothing: what one job of each declares at the first attempt (a retry scales memory
# and time by the attempt, as a convert job's). Their work is a few files per subset or source. The validation's
# and the fingerprints' jobs declare the runtime their paths predict instead (verifyjobs.py): theirs here is
# the floor.
RULES = {
    # reads (and hashes) one source's raw files: one thread a hashed file, up to checkjobs.py's cap (1 here: one file)
    "check_source": Resources(1, 1000, 60),
    "plan": Resources(1, 1000, 10),
    "validate_shard": Resources(1, 1000, RUNTIME_FLOOR),  # opens the images of a slice of one subset's paths
    "validate_subset": Resources(1, 1000, RUNTIME_FLOOR),  # reads the subset's records with its shards' answers
    "validation_summary": Resources(1, 1000, 10),
    "validation_passed": Resources(1, 1000, 10),
    "contact_sheet": Resources(1, 1000, 10),
    "eval_config": Resources(1, 1000, 10),
    "attest_shard": Resources(2, 1000, RUNTIME_FLOOR),  # decodes a slice of one subset's images, on two processes
    "attest_subset": Resources(1, 1000, RUNTIME_FLOOR),  # merges the subset's shard files
    "fingerprints": Resources(1, 1000, 30),
}


def rule_resources(rule: str, attempt: int = 1) -> Resources:
    """What one job of a rule that converts nothing declares at retry `attempt`."""
    return RULES[rule].at(attempt)
