"""The wall time of a list of jobs on N cores, as a scheduler runs them: whenever cores are free, the longest
waiting job that fits them starts (Snakemake's local scheduler and SLURM's backfill fill free cores alike).
On SLURM each job first waits allocation.SLURM_JOB_SECONDS, SLURM_HELD_SECONDS of it holding its cores (its own
Snakemake's start, inside the allocation) and the rest in the queue, holding none; the jobs predicted under
allocation.GROUP_BELOW_SECONDS run in groups of allocation.GROUP_JOBS (profiles/slurm: one wait for the group,
its jobs side by side)."""

from __future__ import annotations

import heapq

from preprocess.sizing import allocation


def wall_seconds(jobs: list[tuple[float, int]], cores: int, overhead: float = 0.0) -> float:
    """Seconds until the last of `jobs` (predicted seconds, threads) ends on `cores` (a job of more threads
    than `cores` takes them all), each job held `overhead` seconds before its own start."""
    waiting = sorted(((seconds, min(threads, cores)) for seconds, threads in jobs), key=lambda job: -job[0])
    running: list[tuple[float, int]] = []  # (end, threads)
    now, free, last = 0.0, cores, 0.0
    while waiting:
        left = []
        for seconds, threads in waiting:
            if threads <= free:
                free -= threads
                heapq.heappush(running, (now + overhead + seconds, threads))
            else:
                left.append((seconds, threads))
        waiting = left
        now, threads = heapq.heappop(running)  # the next job to end frees its cores
        free += threads
        last = max(last, now)
    return max([last] + [end for end, _ in running])


def grouped(jobs: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """The jobs as SLURM gets them: those under GROUP_BELOW_SECONDS in groups of GROUP_JOBS (a group lasts as
    long as its longest job and holds the sum of their threads), the others alone."""
    small = sorted(job for job in jobs if job[0] < allocation.GROUP_BELOW_SECONDS)
    batches = [small[i : i + allocation.GROUP_JOBS] for i in range(0, len(small), allocation.GROUP_JOBS)]
    together = [(max(s for s, _ in batch), sum(t for _, t in batch)) for batch in batches]
    return [job for job in jobs if job[0] >= allocation.GROUP_BELOW_SECONDS] + together


def slurm_wall_seconds(jobs: list[tuple[float, int]], cores: int) -> float:
    held = wall_seconds(grouped(jobs), cores, allocation.SLURM_HELD_SECONDS)
    return allocation.SLURM_QUEUE_SECONDS + held if jobs else 0.0  # every job is queued at the start
