"""A rehearsal at real sizes: build the real-size fakes through the workflow and set what it used beside what
the plan predicted and what each job declared (issue 34, item 6).

    python benchmarks/rehearsal.py [--items N] [--sources ID ...] [--cores 2] [--keep DIR | --fakes DIR]
                                   [--json PATH]                                   (or `make rehearsal`)

1. Writes the real-size fakes (preprocess/demo/real.py: N items of each source) into a folder.
2. Chooses the subsets all of whose sources are written at real size and whose raw data the plan can build
   (a presence check, as `plan` does); the demo's tiny sources stay out.
3. Predicts each conversion from preprocess/registry/costs.yaml (preprocess/sizing/, as `plan`
   does: the conversions' own item counts, seconds, bytes, start-up and the peak-memory model).
4. Runs `snakemake --cores C` on the repository's Snakefile with the fakes' config, targeting every convert
   job's manifest (check and convert; validation is not run: the fakes' items are not the release's names).
5. Reads, per convert job, Snakemake's own record: the `resources:` line it prints for the job (runtime in
   minutes, mem_mb: the values it scheduled with, whatever common.smk computes) and the rule's `benchmark:`
   TSV (s: wall seconds, max_rss in MiB); the `used:` line the job writes at the end of its log (CPU time and
   peak memory as the kernel counted them); and the job's manifest (files and bytes written).

Prints one table per cost key (kind/dataset): items, predicted and measured CPU seconds (whole jobs and per
item after the predicted start-up), bytes per item, peak MB; then one table per job: declared runtime against
used wall time, declared mem_mb against the peak. A row is flagged (and the exit status is 1) where the issue's
acceptance bars fail: measured job seconds or bytes per item more than 2x off the prediction; declared
runtime under twice the used wall time; the peak above mem_mb; mem_mb above 4x the peak + 500 MB.

CPU and peak memory: Snakemake samples a job's process tree every 0.5 s for the first 30 s, then every 30 s,
so its cpu_time and max_rss (the tree's summed RSS, converted here from MiB to MB) miss a job shorter than a
sample. Each convert job therefore logs, at its end, its processes' CPU time and the kernel's high-water marks
(its own VmHWM, its largest forked worker's ru_maxrss). The CPU time used is the logged one (the whole process:
Snakemake's script preamble, imports and start-up included); the peak is the larger of the logged marks and the
samples: exact for a one-process job, a lower bound for a job of several workers. Seconds come from a machine
others share, with `--cores` jobs at once: noisy; bytes and files are exact.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from preprocess.demo.real import WRITERS, write_real  # noqa: E402
from preprocess.formats import tables  # noqa: E402
from preprocess.formats.manifest import read_manifest  # noqa: E402
from preprocess.pipeline.sizing import estimate_build, raw_plans  # noqa: E402
from preprocess.registry import layout  # noqa: E402
from preprocess.registry.config import load_settings  # noqa: E402
from preprocess.sizing import resources, shards  # noqa: E402
from preprocess.sizing.costs import cost_key, cost_of, fallback_key, load_costs  # noqa: E402
from preprocess.sizing.estimate import planned_conversions  # noqa: E402

ITEMS = 8  # items a source by default: the whole rehearsal in about 10-15 minutes on 2 shared cores
RUNTIME_FACTOR = 2  # declared runtime at least twice the used wall time
MEMORY_FACTOR, MEMORY_SLACK_MB = 4, 500  # declared mem_mb at most 4x the peak plus 500 MB
PLAN_FACTOR = 2  # the plan's seconds and bytes within 2x of the build's
# Volume sources get half the items (at least 2): each is hundreds of MB to write and seconds to convert.
VOLUME_SOURCES = ("ct_rate", "radgenome_chestct", "hanseg", "mmdental", "synthrad2023", "brats_ped", "brats_men",
                  "cirrmri600", "m3d_cap")  # fmt: skip
# The header of one job in Snakemake's log: "rule convert:" (or "localrule convert:" when run locally), then
# indented "key: value" lines up to the next blank or non-indented line.
MIB = 1024 * 1024  # Snakemake's benchmark files give memory in MiB; mem_mb and costs.yaml are in MB
JOB_HEADER = re.compile(r"^(?:local)?rule convert:$")
USAGE_LINE = re.compile(
    r"^used: CPU (?P<cpu>[0-9.]+) s; peak memory: this process (?P<own>[0-9.]+) MB, "
    r"largest worker (?P<workers>[0-9.]+) MB$",
    re.M,
)


@dataclass
class Job:
    manifest: str  # results/convert/... (the job's output, its name in the tables)
    key: str  # costs.yaml key
    items: int
    declared_runtime_min: float
    declared_mem_mb: float
    wall_s: float
    cpu_s: float
    max_rss_mb: float  # the larger of the sampled tree and the kernel's high-water marks the job logged
    sampled_rss_mb: float  # the benchmark file's max_rss
    files: int
    bytes: int
    flags: list[str] = field(default_factory=list)


@dataclass
class Kind:
    key: str
    items: int
    jobs: int
    predicted_s: float  # whole jobs: start-up + items x seconds, added up
    measured_cpu_s: float
    predicted_s_item: float
    measured_s_item: float  # (CPU seconds - predicted start-up) / items
    predicted_bytes_item: float
    measured_bytes_item: float
    predicted_peak_mb: float
    measured_peak_mb: float
    flags: list[str] = field(default_factory=list)


def chosen_subsets(settings, registry, sources: set[str]) -> tuple[list, list[str]]:
    """The subsets all of whose sources are written at real size and that the plan builds; and a line for
    each such subset it does not build (with why)."""
    plans = raw_plans(settings, registry)
    chosen, left_out = [], []
    for subset in registry.subsets:
        if not set(subset.source_ids) <= sources or subset.key not in plans:
            continue
        plan = plans[subset.key]
        if plan.action == "build":
            chosen.append(subset)
        elif plan.action == "skip":
            left_out.append(f"{subset.key}: not built at these sizes: {plan.reason}")
    return chosen, left_out


def predictions(settings, registry) -> list[tuple]:
    """(subset, conversion, cost key, Cost, items, jobs) of every conversion the configured build runs."""
    costs = load_costs()
    pairs = [(s, c) for s, c in planned_conversions(settings, registry) if registry.kinds[c.kind].module]
    found = estimate_build(settings, registry, pairs, costs)
    rows = []
    for (subset, conversion), guess in zip(pairs, found, strict=True):
        cost = cost_of(registry, subset, conversion, costs)
        jobs = shards.shard_count(settings, registry, subset, conversion, costs)
        rows.append((subset, conversion, cost_key(registry, subset, conversion), cost, guess.items, jobs))
    return rows


def declared_resources(log: str) -> dict[str, dict[str, str]]:
    """manifest path -> the `resources:` values Snakemake printed for that convert job."""
    found, block = {}, None
    for line in log.splitlines():
        if JOB_HEADER.match(line.strip()) and not line.startswith(" "):
            block = {}
            continue
        if block is None:
            continue
        if not line.startswith(" ") or not line.strip():
            block = None
            continue
        name, _, value = line.strip().partition(": ")
        block[name] = value
        if "output" in block and "resources" in block:
            values = dict(pair.split("=", 1) for pair in block["resources"].split(", ") if "=" in pair)
            found[block["output"].strip()] = values
            block = None
    return found


def logged_usage(log: Path) -> tuple[float, float]:
    """(CPU seconds, peak MB) the job wrote at its end (preprocess/pipeline/snakemake_entry.py): its processes'
    CPU time, and the larger of the high-water marks of this process and its largest worker. Exact for a
    one-process job, which Snakemake's 0.5 s samples miss when it is shorter than that; a lower bound of the
    peak of a job of several workers' tree."""
    found = USAGE_LINE.search(log.read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit(f"{log}: no 'used:' line (a job that did not finish?)")
    return float(found["cpu"]), max(float(found["own"]), float(found["workers"]))


def benchmark_record(path: Path) -> dict[str, float]:
    with open(path, encoding="utf-8", newline="") as handle:
        row = next(csv.DictReader(handle, delimiter="\t"))
    return {name: float(row[name]) if row[name] not in ("", "NA") else float("nan") for name in row if name != "h:m:s"}


def written(manifest: Path) -> tuple[int, int]:
    """Files (and links) a job wrote and their bytes, from its manifest (as benchmarks/item_costs.py counts)."""
    rows = [row for row in read_manifest(manifest) if row[1] in ("file", "symlink")]
    size = sum(int(detail.split(":", 1)[0]) for _, kind, detail in rows if kind == "file" and ":" in detail)
    return len(rows), size


def job_flags(job: Job) -> list[str]:
    flags = []
    if job.declared_runtime_min * 60 < RUNTIME_FACTOR * job.wall_s:
        flags.append(f"runtime < {RUNTIME_FACTOR}x used")
    if job.max_rss_mb > job.declared_mem_mb:
        flags.append("peak > mem_mb")
    if job.declared_mem_mb > MEMORY_FACTOR * job.max_rss_mb + MEMORY_SLACK_MB:
        flags.append(f"mem_mb > {MEMORY_FACTOR}x peak + {MEMORY_SLACK_MB}")
    return flags


def _off(measured: float, predicted: float) -> bool:
    """More than PLAN_FACTOR apart, either way."""
    if predicted <= 0 or measured <= 0:
        return measured != predicted
    return max(measured / predicted, predicted / measured) > PLAN_FACTOR


def kinds_of(jobs: list[Job], costs: dict) -> list[Kind]:
    found = []
    for key in sorted({job.key for job in jobs}):
        mine = [job for job in jobs if job.key == key]
        cost = costs.get(key) or costs[fallback_key(key)]  # as sizing.costs.cost_of: the kind's entry otherwise
        items = sum(job.items for job in mine)
        predicted = sum(cost.startup_seconds + job.items * cost.seconds for job in mine)
        cpu = sum(job.cpu_s for job in mine)
        per_item = max(cpu - cost.startup_seconds * len(mine), 0.0) / max(items, 1)
        kind = Kind(
            key, items, len(mine), predicted, cpu, cost.seconds, per_item, cost.bytes,
            sum(job.bytes for job in mine) / max(items, 1),
            max(resources.peak_mb(cost, job.items) for job in mine), max(job.max_rss_mb for job in mine),
        )  # fmt: skip
        if _off(kind.measured_cpu_s, kind.predicted_s):
            kind.flags.append(f"seconds > {PLAN_FACTOR}x off")
        if _off(kind.measured_bytes_item, kind.predicted_bytes_item):
            kind.flags.append(f"bytes > {PLAN_FACTOR}x off")
        found.append(kind)
    return found


def kind_table(kinds: list[Kind]) -> str:
    headers = ["kind/dataset", "items", "jobs", "pred s", "cpu s", "pred s/item", "s/item", "pred MB/item",
               "MB/item", "pred peak MB", "peak MB", "flags"]  # fmt: skip
    rows = [
        [k.key, k.items, k.jobs, f"{k.predicted_s:.2f}", f"{k.measured_cpu_s:.2f}", f"{k.predicted_s_item:.4f}",
         f"{k.measured_s_item:.4f}", f"{k.predicted_bytes_item / 1e6:.3f}", f"{k.measured_bytes_item / 1e6:.3f}",
         f"{k.predicted_peak_mb:.0f}", f"{k.measured_peak_mb:.0f}", "; ".join(k.flags) or "ok"]
        for k in kinds
    ]  # fmt: skip
    return tables.render(headers, rows)


def job_table(jobs: list[Job]) -> str:
    headers = ["job", "items", "runtime min", "used min", "mem_mb", "peak MB", "sampled MB", "flags"]
    rows = [
        [job.manifest.removeprefix("results/convert/").removesuffix(".tsv"), job.items,
         f"{job.declared_runtime_min:g}", f"{job.wall_s / 60:.2f}", f"{job.declared_mem_mb:g}",
         f"{job.max_rss_mb:.0f}", f"{job.sampled_rss_mb:.0f}", "; ".join(job.flags) or "ok"]
        for job in jobs
    ]  # fmt: skip
    return tables.render(headers, rows)


def rehearse(fakes: Path, workdir: Path, cores: int, sources: set[str]) -> tuple[list[Kind], list[Job], list[str]]:
    """Build the fakes' chosen subsets' convert jobs in `workdir` and read what they declared and used."""
    base = yaml.safe_load((fakes / "config.yaml").read_text(encoding="utf-8"))
    settings = load_settings(fakes / "config.yaml")
    registry = settings.registry()
    chosen, notes = chosen_subsets(settings, registry, sources)
    if not chosen:
        raise SystemExit(f"no subset of {', '.join(sorted(sources))} can be built from {fakes}: {'; '.join(notes)}")
    config = workdir / "rehearsal.yaml"
    # overwrite_existing: fakes built before (--fakes) are converted again, not found done
    values = {**base, "subsets": [subset.key for subset in chosen], "overwrite_existing": True}
    config.write_text(yaml.safe_dump(values), encoding="utf-8")
    settings = load_settings(config)
    planned = predictions(settings, registry)
    targets = {}  # manifest -> (cost key, items of the job)
    for subset, conversion, key, _, items, jobs in planned:
        for shard in range(jobs):
            manifest = str(layout.shard_manifest(layout.RESULTS, subset, conversion.name, shard, jobs))
            targets[manifest] = (key, len(range(shard, items, jobs)))  # items are dealt round-robin
    command = [
        sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
        "--configfile", str(config), "--cores", str(cores), *sorted(targets),
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, cwd=workdir)
    (workdir / "snakemake.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    if done.returncode != 0:
        raise SystemExit(f"the build failed (its log: {workdir / 'snakemake.log'}):\n{done.stderr[-3000:]}")
    notes.append(f"snakemake --cores {cores}: {len(targets)} convert jobs in {time.monotonic() - started:.0f} s")
    declared = declared_resources(done.stderr)
    jobs = []
    for manifest, (key, items) in sorted(targets.items()):
        if manifest not in declared:
            raise SystemExit(f"{manifest}: Snakemake printed no resources for it (log: {workdir / 'snakemake.log'})")
        bench = benchmark_record(workdir / manifest.replace("results/convert/", "results/benchmarks/convert/", 1))
        files, size = written(workdir / manifest)
        sampled = bench["max_rss"] * MIB / 1e6
        log = workdir / "logs" / manifest.removeprefix("results/").replace(".tsv", ".log")
        cpu, peak = logged_usage(log)
        job = Job(
            manifest, key, items, float(declared[manifest]["runtime"]), float(declared[manifest]["mem_mb"]),
            bench["s"], cpu, max(sampled, peak), sampled, files, size,
        )  # fmt: skip
        job.flags = job_flags(job)
        jobs.append(job)
    return kinds_of(jobs, load_costs()), jobs, notes


def report(kinds: list[Kind], jobs: list[Job], notes: list[str], fakes: str) -> str:
    failed = sum(bool(k.flags) for k in kinds) + sum(bool(j.flags) for j in jobs)
    return "\n".join(
        [
            f"Rehearsal {datetime.date.today().isoformat()}: real-size fakes, {fakes}",
            *notes,
            "",
            "Per kind: predicted (costs.yaml via preprocess/sizing) against measured (the jobs' logged CPU time; the",
            "jobs' manifests: bytes; peak: the larger of max_rss and the job's logged high-water marks; MB are",
            "10^6 bytes)",
            kind_table(kinds),
            "",
            "Per job: declared (Snakemake's resources: line) against used (its benchmark: file; peak as above)",
            job_table(jobs),
            "",
            f"{failed} of {len(kinds) + len(jobs)} rows fail a bar" if failed else "every bar holds",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=ITEMS, help=f"items a source (default {ITEMS})")
    parser.add_argument("--sources", nargs="+", help="only these sources (default every real-size writer)")
    parser.add_argument("--cores", type=int, default=2, help="snakemake --cores (default 2)")
    parser.add_argument("--keep", type=Path, help="write the fakes and the build here and keep them")
    parser.add_argument("--fakes", type=Path, help="reuse fakes (demo --real-sizes; with --sources)")
    parser.add_argument("--json", type=Path, help="also write the tables' rows here as JSON")
    args = parser.parse_args()
    sources = set(args.sources or WRITERS)
    with tempfile.TemporaryDirectory() as scratch:
        folder = (args.keep or Path(scratch)).resolve()
        fakes = args.fakes.resolve() if args.fakes else folder / "fakes"
        if args.fakes is None:
            started = time.monotonic()
            counts = {source: max(2, args.items // 2) for source in VOLUME_SOURCES}
            write_real(fakes, args.items, sources=sorted(sources), counts=counts)
            print(f"real-size fakes written to {fakes} in {time.monotonic() - started:.0f} s", flush=True)
        workdir = folder / "build"
        shutil.rmtree(workdir, ignore_errors=True)  # a fresh build: Snakemake prints only the jobs it runs
        workdir.mkdir(parents=True)
        kinds, jobs, notes = rehearse(fakes, workdir, args.cores, sources)
    written = f"{args.items} items a source (volume sources {max(2, args.items // 2)})"
    print(report(kinds, jobs, notes, f"written earlier to {args.fakes}" if args.fakes else written))
    if args.json:
        rows = {"kinds": [asdict(k) for k in kinds], "jobs": [asdict(j) for j in jobs], "notes": notes}
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 1 if any(k.flags for k in kinds) or any(j.flags for j in jobs) else 0


if __name__ == "__main__":
    sys.exit(main())
