"""How long the jobs of a build are cut to, from the cores it runs on (issue 42), so that the wall time on N
cores approaches its lower bound, max(core-seconds / N, the longest single item) plus the scheduler's per-job
overhead: the build's work spread over its cores, WAVES jobs a core,

    target seconds = min(JOB_SECONDS, max(MIN_JOB_SECONDS, core-seconds / (cores x WAVES)))

for the WAVES whose cut the schedule predicts to end soonest on SLURM (shards.choose_target): never jobs
shorter than MIN_JOB_SECONDS, where SLURM's start-up would weigh on every one, nor longer than
resources.JOB_SECONDS. A conversion of w predicted seconds (on its threads) is then cut into ceil(w / target)
jobs: each at most the target and, once cut, more than half of it. The cores come from the config's `cores:`,
else the run's `--cores` (`--jobs` under a cluster profile, each queued job taken to hold about one core);
without them (`plan` before a core count is chosen) the target is JOB_SECONDS, the cut of an hour."""

from __future__ import annotations

from preprocess.sizing.resources import JOB_SECONDS

# SLURM's per-job overhead: the scheduler's start, the job's environment and its Snakemake, before the job's own
# start-up. Measured: about 7 s a job on a one-node loopback cluster for a 3-rule workflow (32 s on SLURM
# against 11 s locally, status polled every 2 s: ../shared/notes/slurm-on-loopback.md), and this workflow's
# Snakefile, which every SLURM job parses again, takes 4-5 s to start (`snakemake -n`, 1.7 s of CPU) where a toy
# one takes about 1.5: about 10 s. Tripled for a shared cluster's queue and scheduling intervals, as the
# declared runtimes are (resources.SAFETY).
SLURM_JOB_SECONDS = 30
# Of that wait, what a job spends inside its allocation, holding its cores: its own Snakemake's start (the
# Snakefile parsed again, 4-5 s, where the toy's 1.5 s is in the 7 s above), tripled as the rest. The remainder
# (SLURM_JOB_SECONDS - SLURM_HELD_SECONDS) is the scheduler's queue and Snakemake's status polling: it delays the
# job's start, but no core is held meanwhile (a pending job holds none).
SLURM_HELD_SECONDS = 15
SLURM_QUEUE_SECONDS = SLURM_JOB_SECONDS - SLURM_HELD_SECONDS
# A local run's (`snakemake --cores N`) costs besides its jobs' own work, measured by benchmarks/local_overhead.py
# on the 2-core machine (docs/benchmarks.md, "Predicted against measured wall"): what each job holds its cores
# beyond its own start-up and work (Snakemake forks it, its script preamble loads, Snakemake records it done and
# chooses the next): 0.27 s a job in all with the machine quiet, less than the 0.32 s of imports its measured
# start-up already holds, so none (under a load of 10 it was 1.11 s: the load's, not Snakemake's); and the
# LOCAL_START_SECONDS the run spends before its first job (the Snakefile parsed, the registry loaded, the DAG
# built: 1.8 s for `snakemake -n`, 3 s to the first job). A SLURM run starts the same way on the submit host
# (its jobs' own overhead is SLURM_JOB_SECONDS).
LOCAL_JOB_SECONDS = 0.0
LOCAL_START_SECONDS = 4.0
# No conversion is cut into jobs of less than this: SLURM's start-up is then at most a tenth of a job's time.
MIN_JOB_SECONDS = 300
# Jobs per core the build's work may be cut into (shards.choose_target takes the one the schedule predicts to
# end soonest): more waves shorten the last wave's ragged end, and each wave costs every core a job's start-up.
WAVES = (1, 2, 3, 4, 6, 8)
# A job predicted under this runs in a group of GROUP_JOBS on SLURM (profiles/slurm: `group-components`), one
# start-up for the group: it would otherwise spend more time waiting for the scheduler than working.
GROUP_BELOW_SECONDS = SLURM_JOB_SECONDS
GROUP_JOBS = 8
SMALL_JOBS = "small_jobs"  # the group's name in the workflow and the profile


def targets(core_seconds: float, cores: int) -> list[float]:
    """The job lengths a build of `core_seconds` on `cores` may be cut to: its work over WAVES jobs a core, for
    each WAVES, within [MIN_JOB_SECONDS, JOB_SECONDS]."""
    found = {min(float(JOB_SECONDS), max(float(MIN_JOB_SECONDS), core_seconds / (cores * k))) for k in WAVES}
    return sorted(found)


def lower_bound(core_seconds: float, longest_item: float, cores: int, overhead: float = 0.0) -> float:
    """No schedule on `cores` ends sooner: the work spread evenly, or the longest single item, plus one job's
    overhead."""
    return max(core_seconds / cores, longest_item) + overhead
