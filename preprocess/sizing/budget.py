"""The whole build's budget, from the per-conversion and per-stage estimates (estimate.py, stages.py): for the
test split and for every split, on each of N cores, its jobs (the conversions cut for those cores,
allocation.py), core-hours, disk, largest job (declared memory and runtime) and the wall time, locally
(`snakemake --cores N`) and on a SLURM allocation of N cores, each next to its lower bound.

Wall time is a list-scheduling estimate: the jobs, longest predicted first, each start as soon as the cores
it holds (its threads, at most N) are free. Locally a job starts the moment cores free up; on SLURM each job
also waits allocation.SLURM_JOB_SECONDS for the scheduler to start it and its environment to load, and the
jobs predicted under allocation.GROUP_BELOW_SECONDS go in groups of allocation.GROUP_JOBS (one wait for the
group, its jobs side by side: profiles/slurm). Each local job also holds its cores
allocation.LOCAL_JOB_SECONDS beyond its own start-up and work (Snakemake's own share of a job). The
conversions' figures are the budget's; each budget also holds every stage's (`stages`: the raw checks, the
conversions, the validation, the fingerprints, stages.py; the contact sheets and the run's own steps, its start
included, runjobs.py), which run in turn: a whole build's wall time is about their sum."""

from __future__ import annotations

from preprocess.sizing import allocation, runjobs, shards, stages
from preprocess.sizing.estimate import at_target
from preprocess.sizing.schedule import slurm_wall_seconds, wall_seconds


def _jobs(estimates) -> list[tuple[float, int]]:
    return [(seconds, e.threads) for e in estimates for seconds in e.job_seconds()]


STAGES = ("check", "convert", "validate", "attest", "contact")  # in turn: each waits for the one before


def _walls(estimates, cores: int) -> dict:
    """Of one stage's estimates: its jobs, core-hours, longest predicted job (seconds), and its local and SLURM
    wall hours next to their lower bounds. A stage cut into shards and merges (stages.py: the validation, the
    fingerprints) runs its merges once its shards are done: the two walls, and the two bounds, add up."""
    phases = [[e for e in estimates if e.conversion != "merge"], [e for e in estimates if e.conversion == "merge"]]
    jobs = _jobs(estimates)
    found = {
        "jobs": len(jobs),
        "core_hours": sum(e.core_hours for e in estimates),
        "longest_job_seconds": max((seconds for seconds, _ in jobs), default=0.0),
        **dict.fromkeys(("local", "slurm", "local_bound", "slurm_bound"), 0.0),
    }
    for phase in (p for p in phases if p):
        jobs = _jobs(phase)
        work = sum(seconds * threads for seconds, threads in jobs)
        longest = max((e.startup_seconds + e.item_seconds for e in phase if e.items), default=0.0)
        local = allocation.LOCAL_JOB_SECONDS
        found["local"] += wall_seconds(jobs, cores, local) / 3600
        found["slurm"] += slurm_wall_seconds(jobs, cores) / 3600
        found["local_bound"] += allocation.lower_bound(work + local * len(jobs), longest, cores, local) / 3600
        found["slurm_bound"] += allocation.lower_bound(work, longest, cores, allocation.SLURM_JOB_SECONDS) / 3600
    return found


def _run_walls() -> dict:
    """The run's own steps (runjobs.py), one after another on the host Snakemake runs on (local rules, also
    under a SLURM profile), after its start."""
    steps = runjobs.run_steps()
    seconds = allocation.LOCAL_START_SECONDS + sum(
        allocation.LOCAL_JOB_SECONDS + s for e in steps for s in e.job_seconds()
    )
    hours = seconds / 3600
    return {
        "jobs": len(steps),
        "core_hours": sum(e.core_hours for e in steps),
        "longest_job_seconds": max(s for e in steps for s in e.job_seconds()),
        **{key: hours for key in ("local", "slurm", "local_bound", "slurm_bound")},
    }


def target_for(estimates, cores: int | None, configured: int | None = None) -> float:
    """The seconds the conversions are cut to on `cores` (the config's `cores:` wins, as in the workflow)."""
    return shards.choose_target([e.cutting for e in estimates if e.cutting is not None], configured or cores)


def totals(estimates, cores: list[int], configured: int | None = None) -> list[dict]:
    """One budget per split group the estimates hold (test, and all when there is more than test) and per
    core count, the conversions cut for those cores."""
    groups = {"test": [e for e in estimates if e.split != "train"]}
    if any(e.split == "train" for e in estimates):
        groups["all"] = list(estimates)
    found = []
    for name, chosen in groups.items():
        for n in cores:
            target = target_for(chosen, n, configured)  # the cut of a build of these splits, as the workflow's
            cut = [at_target(e, target) for e in chosen]
            converted = [e for e in cut if e.stage == "convert"]
            by_stage = {"convert": converted, "validate": [], "attest": []}
            by_stage["check"] = [e for e in cut if e.stage == "check"]
            for e in stages.subset_estimates(converted, target) + runjobs.contact_estimates(converted):
                by_stage.setdefault(e.stage, []).append(e)
            walls = {stage: _walls(by_stage[stage], n) for stage in STAGES if by_stage.get(stage)}
            walls["run"] = _run_walls()  # Snakemake's start and its own steps, on any core count
            memory = max(converted, key=lambda e: e.mem_mb, default=None)
            longest = max(converted, key=lambda e: e.runtime, default=None)
            found.append(
                {
                    "splits": name,
                    "cores": n,
                    "target_seconds": target,
                    "jobs": sum(e.jobs for e in converted),
                    "core_hours": sum(e.core_hours for e in converted),
                    "bytes": sum(e.bytes for e in converted),
                    "largest_mem_mb": memory.mem_mb if memory else 0,
                    "largest_mem_job": f"{memory.subset}/{memory.conversion}" if memory else "",
                    "longest_runtime": longest.runtime if longest else 0,
                    "longest_runtime_job": f"{longest.subset}/{longest.conversion}" if longest else "",
                    **{key: walls["convert"][key] for key in ("local", "slurm", "local_bound", "slurm_bound")},
                    "stages": walls,  # every stage, the conversions too
                }
            )
    return found
