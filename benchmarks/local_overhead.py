"""What a local Snakemake run costs besides its jobs' own work (issue 42, item 5): the wall seconds each job adds
on `snakemake --cores 1`, and the seconds the repository's Snakefile takes to start (parse, registry, DAG).

    python benchmarks/local_overhead.py [--jobs 24] [--repeats 3] [--configfile CONFIG]

1. Per job: a Snakefile of K jobs that each run a `script:` importing what every rule's script imports
   (workflow/scripts/step.py: preprocess.pipeline.snakemake_entry) and nothing else, run with `--cores 1`
   for K and for 1 job: (wall(K) - wall(1)) / (K - 1) is a job's wall from Snakemake's choosing it to its next
   choice (fork, the interpreter, Snakemake's script preamble, the imports, Snakemake's bookkeeping). Less the
   CPU seconds of those imports in a bare interpreter, which a job's measured start-up already holds
   (costs.yaml `startup_seconds`, stage_costs: measured as the whole process's CPU), it is the per-job
   overhead the plan adds (preprocess/sizing/allocation.py LOCAL_JOB_SECONDS).
2. Start: `snakemake -n` of the repository's Snakefile (with --configfile CONFIG, default the shipped demo
   config, in a scratch folder): the wall before the first job runs (LOCAL_START_SECONDS).

Medians of --repeats. The machine is shared: the load average is printed with the figures."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IMPORTS = "import preprocess.pipeline.snakemake_entry"  # what step.py imports before the step runs

SNAKEFILE = """
rule all:
    input: expand("done/{{k}}.txt", k=range({jobs}))

rule job:
    output: "done/{{k}}.txt"
    script: "job.py"
"""
SCRIPT = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
{IMPORTS}
open(snakemake.output[0], "w").close()  # noqa: F821 - injected by Snakemake
"""


def _wall(command: list[str], cwd: Path) -> float:
    started = time.monotonic()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return time.monotonic() - started


def job_wall(jobs: int, scratch: Path) -> float:
    folder = scratch / f"jobs-{jobs}-{time.monotonic_ns()}"
    folder.mkdir()
    (folder / "Snakefile").write_text(SNAKEFILE.format(jobs=jobs), encoding="utf-8")
    (folder / "job.py").write_text(SCRIPT, encoding="utf-8")
    return _wall([sys.executable, "-m", "snakemake", "--cores", "1", "--quiet", "all"], folder)


def import_cpu() -> float:
    """CPU seconds of a bare interpreter importing what a rule's script imports."""
    before = os.times()
    subprocess.run([sys.executable, "-c", IMPORTS], cwd=REPO, check=True)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def start_wall(configfile: Path | None, scratch: Path) -> float:
    folder = scratch / f"start-{time.monotonic_ns()}"
    folder.mkdir()
    config = ["--configfile", str(configfile)] if configfile else []
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(folder)]
    return _wall([*command, *config, "-n", "--quiet"], folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=24, help="no-op jobs in the long run (default 24)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--configfile", type=Path, help="the config `snakemake -n` starts with (default: the demo)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        many = statistics.median(job_wall(args.jobs, scratch) for _ in range(args.repeats))
        one = statistics.median(job_wall(1, scratch) for _ in range(args.repeats))
        imports = statistics.median(import_cpu() for _ in range(args.repeats))
        start = statistics.median(start_wall(args.configfile, scratch) for _ in range(args.repeats))
    per_job = (many - one) / (args.jobs - 1)
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f} (2 cores shared); medians of {args.repeats}")
    print(f"snakemake --cores 1: {args.jobs} no-op script jobs {many:.2f} s, 1 job {one:.2f} s")
    print(f"a job's wall {per_job:.2f} s; the imports' CPU in a bare interpreter {imports:.2f} s")
    print(f"per-job overhead beyond a job's start-up (LOCAL_JOB_SECONDS): {per_job - imports:.2f} s")
    print(f"the Snakefile's start, snakemake -n (LOCAL_START_SECONDS): {start:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
