"""The whole build's budget, from the per-conversion estimates (estimate.py): for the test
split and for every split, its core-hours, disk, largest job (declared memory and runtime) and the wall time
on N cores, locally (`snakemake --cores N`) and on a SLURM allocation of N cores.

Wall time is a list-scheduling estimate: the jobs, longest predicted first, each start as soon as the cores
it holds (its threads, at most N) are free. Locally a job starts the moment cores free up; on SLURM each job
also waits SLURM_JOB_SECONDS for the scheduler to start it and its environment to load. The checks and the
validation (minutes in all) are left out."""

from __future__ import annotations

import heapq

SLURM_JOB_SECONDS = 60  # per job: the scheduler's start and the job's environment, before its own start-up


def wall_seconds(jobs: list[tuple[float, int]], cores: int, overhead: float = 0.0) -> float:
    """Seconds until the last of `jobs` (predicted seconds, threads) ends on `cores`, longest first."""
    free = [0.0] * cores  # when each core is next free
    for seconds, threads in sorted(jobs, key=lambda job: -job[0]):
        held = [heapq.heappop(free) for _ in range(min(threads, cores))]
        ends = max(held) + overhead + seconds
        for _ in held:
            heapq.heappush(free, ends)
    return max(free, default=0.0)


def _jobs(estimates) -> list[tuple[float, int]]:
    return [(seconds, e.threads) for e in estimates for seconds in e.job_seconds()]


def totals(estimates, cores: list[int]) -> list[dict]:
    """One budget per split group the estimates hold: test, and all (when there is more than test)."""
    groups = {"test": [e for e in estimates if e.split != "train"]}
    if any(e.split == "train" for e in estimates):
        groups["all"] = list(estimates)
    found = []
    for name, chosen in groups.items():
        jobs = _jobs(chosen)
        memory = max(chosen, key=lambda e: e.mem_mb, default=None)
        longest = max(chosen, key=lambda e: e.runtime, default=None)
        found.append(
            {
                "splits": name,
                "jobs": len(jobs),
                "core_hours": sum(e.core_hours for e in chosen),
                "bytes": sum(e.bytes for e in chosen),
                "largest_mem_mb": memory.mem_mb if memory else 0,
                "largest_mem_job": f"{memory.subset}/{memory.conversion}" if memory else "",
                "longest_runtime": longest.runtime if longest else 0,
                "longest_runtime_job": f"{longest.subset}/{longest.conversion}" if longest else "",
                "wall_hours": {n: wall_seconds(jobs, n) / 3600 for n in cores},
                "slurm_wall_hours": {n: wall_seconds(jobs, n, SLURM_JOB_SECONDS) / 3600 for n in cores},
            }
        )
    return found
