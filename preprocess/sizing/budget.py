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
included, runjobs.py), each priced alone, and the whole build's (`build`) as the workflow orders their jobs:
the checks, then every subset's conversions, validation and fingerprints side by side, then the run's end
steps (buildwall.py)."""

from __future__ import annotations

from preprocess.sizing import allocation, buildwall, runjobs, stages, targets
from preprocess.sizing.estimate import at_target
from preprocess.sizing.schedule import slurm_wall_seconds, wall_seconds


def _jobs(estimates) -> list[tuple[float, int]]:
    return [(seconds, e.threads) for e in estimates for seconds in e.job_seconds()]


STAGES = ("check", "convert", "validate", "attest", "contact")
SIDE_BY_SIDE = ("convert", "validate", "attest", "contact")  # a subset's, once the checks are done (buildwall.py)


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


def _build_walls(walls: dict, side_by_side: list, cores: int) -> dict:
    """The whole build: the run's start and own steps and the checks, one after another (the plan checkpoint
    waits for every check), plus the subsets' conversions, validation, fingerprints and contact sheets as a
    graph (buildwall.py)."""
    middle = buildwall.walls(side_by_side, cores)
    keys = ("local", "slurm", "local_bound", "slurm_bound")
    found = {key: walls["run"][key] + walls.get("check", {}).get(key, 0.0) + middle[key] for key in keys}
    found["jobs"] = sum(w["jobs"] for w in walls.values())
    found["core_hours"] = sum(w["core_hours"] for w in walls.values())
    found["longest_job_seconds"] = max(w["longest_job_seconds"] for w in walls.values())
    return found


def target_for(estimates, cores: int | None, configured: int | None = None) -> targets.Targets:
    """The seconds the conversions and the verification shards are cut to on `cores` (the config's `cores:`
    wins, as in the workflow)."""
    return targets.choose([e.cutting for e in estimates if e.cutting is not None], configured or cores)


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
            cut = [at_target(e, target.convert) for e in chosen]
            converted = [e for e in cut if e.stage == "convert"]
            by_stage = {"convert": converted, "validate": [], "attest": []}
            by_stage["check"] = [e for e in cut if e.stage == "check"]
            for e in stages.subset_estimates(converted, target.verify) + runjobs.contact_estimates(converted):
                by_stage.setdefault(e.stage, []).append(e)
            walls = {stage: _walls(by_stage[stage], n) for stage in STAGES if by_stage.get(stage)}
            walls["run"] = _run_walls()  # Snakemake's start and its own steps, on any core count
            build = _build_walls(walls, [e for stage in SIDE_BY_SIDE for e in by_stage.get(stage, [])], n)
            memory = max(converted, key=lambda e: e.mem_mb, default=None)
            longest = max(converted, key=lambda e: e.runtime, default=None)
            found.append(
                {
                    "splits": name,
                    "cores": n,
                    "target_seconds": target.convert,
                    "verify_target_seconds": target.verify,
                    "jobs": sum(e.jobs for e in converted),
                    "core_hours": sum(e.core_hours for e in converted),
                    "bytes": sum(e.bytes for e in converted),
                    "largest_mem_mb": memory.mem_mb if memory else 0,
                    "largest_mem_job": f"{memory.subset}/{memory.conversion}" if memory else "",
                    "longest_runtime": longest.runtime if longest else 0,
                    "longest_runtime_job": f"{longest.subset}/{longest.conversion}" if longest else "",
                    **{key: walls["convert"][key] for key in ("local", "slurm", "local_bound", "slurm_bound")},
                    "stages": walls,  # every stage alone, the conversions too
                    "build": build,  # the whole build, its stages overlapping as the workflow runs them
                }
            )
    return found
