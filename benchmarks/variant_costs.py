"""Plan against build at every size of MedMNIST and MedSegBench (issue 42, item 2): `plan`'s seconds and bytes
per item, from the costs.yaml entry of the size the config chooses, beside what a build of that size takes.

    python benchmarks/variant_costs.py [--cpu 1] [--items 288] [--keep DIR | --fakes DIR]

1. Writes real-size fakes of MedMNIST and MedSegBench at every size (preprocess/demo/real_npz.py), DermaMNIST at
   its full split counts (7,007/1,003/2,005: the issue's DermaMNIST-sized check) and `--items` test images of
   every MedSegBench flag (288 by default: PolypGen's test split). These are not the fakes costs.yaml was
   measured on (benchmarks/item_costs.py: other item counts, DermaMNIST at 400-8,000 images).
2. For each size, with the config of that size (DIR/variants/SOURCE-SIZE/config.yaml), predicts each conversion
   as `plan` does (preprocess/pipeline/sizing.py estimate_build: the items its own plan counts in the raw data,
   the jobs cut, the bytes): its seconds on one core are the jobs' start-ups plus the items times the entry's
   seconds per item.
3. Checks the raw files (their MD5s cached, as a workflow's check rule does before the convert jobs) and
   builds it: each of its jobs (`convert --shard I/N --workers 1`) as its own process pinned to one CPU; CPU time
   (user + system, as item_costs.py measures) and the bytes its manifests list.
4. Prints per conversion and size: items, the costs.yaml key, plan and build seconds per item (start-ups
   included) and bytes per item, and build / plan; a ratio beyond 2x either way is flagged (exit status 1).

One run a job: the seconds are those of a shared machine (the load average is printed), the bytes are exact.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.item_costs import run_job  # noqa: E402
from preprocess.demo.real import write_real  # noqa: E402
from preprocess.demo.real_npz import variant_folder, variants  # noqa: E402
from preprocess.formats import tables  # noqa: E402
from preprocess.pipeline.sizing import estimate_build  # noqa: E402
from preprocess.registry.config import load_settings  # noqa: E402
from preprocess.sizing.costs import cost_key, cost_of, load_costs  # noqa: E402

FACTOR = 2  # the acceptance: plan's seconds and bytes per item within 2x of a build
# The conversions built at every size: DermaMNIST (RGB, the check), a MedSegBench flag in RGB and one grey
BUILT = {
    "medmnist": [("2D_Task/DermaMNIST", "npz_unpack_2d")],
    "medsegbench": [("2D_Task/Gastrointestinal", "polypgen"), ("2D_Task/UltrasoundNerve", "nerve")],
}


def _ratio(build: float, plan: float) -> str:
    ratio = build / plan if plan else float("inf")
    return f"{ratio:.2f}" + (" !" if not 1 / FACTOR <= ratio <= FACTOR else "")


def compare(fakes: Path, source_id: str, variant: str, cpu: int, scratch: Path) -> list[list[str]]:
    default, _ = variants(source_id)
    chosen = {} if variant == default else {source_id: variant}
    values = {**yaml.safe_load((variant_folder(fakes, chosen) / "config.yaml").read_text()), "overwrite_existing": True}
    values["source_variants"] = {source_id: variant}
    config = scratch / f"config-{source_id}-{variant}.yaml"
    config.write_text(yaml.safe_dump(values))
    # the checksums first, into the cache every job reads (as item_costs.py): a job times its conversion only
    check = [sys.executable, "-m", "preprocess", "check", "--config", str(config), "--source", source_id]
    subprocess.run([*check, "--results", str(scratch / "jobs" / "results")], cwd=REPO, capture_output=True, check=False)
    settings = load_settings(config)
    registry = settings.registry()
    costs = load_costs()
    rows = []
    for subset_key, name in BUILT[source_id]:
        subset = next(s for s in registry.subsets if s.key == subset_key)
        conversion = next(c for c in subset.conversions if c.name == name and c.split == "test")
        (guess,) = estimate_build(settings, registry, [(subset, conversion)], costs)  # as `plan` counts and cuts
        cost = cost_of(registry, subset, conversion, costs)
        plan_seconds = guess.jobs * cost.startup_seconds + guess.items * cost.seconds
        seconds = size = 0.0
        for shard in range(1, guess.jobs + 1):
            cpu_s, _, _, written = run_job(config, subset, conversion, shard, guess.jobs, cpu, scratch / "jobs")
            seconds, size = seconds + cpu_s, size + written
        items = max(guess.items, 1)
        rows.append(
            [
                f"{subset_key.split('/')[-1]} ({name})",
                variant,
                f"{guess.items:,}",
                f"`{cost_key(registry, subset, conversion)}`",
                f"{plan_seconds / items * 1e3:.3f}",
                f"{seconds / items * 1e3:.3f}",
                _ratio(seconds, plan_seconds),
                f"{guess.bytes / items:,.0f}",
                f"{size / items:,.0f}",
                _ratio(size, guess.bytes),
            ]
        )
        print(" | ".join(rows[-1]), flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", type=int, default=1, help="the CPU every job is pinned to (default 1)")
    parser.add_argument("--items", type=int, default=288, help="MedSegBench test images a flag (default 288)")
    parser.add_argument("--keep", type=Path, help="write the fakes here and keep them (default: a temporary folder)")
    parser.add_argument("--fakes", type=Path, help="reuse fakes written earlier with --keep")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        fakes = args.fakes or args.keep or Path(scratch) / "fakes"
        if args.fakes is None:
            started = time.perf_counter()
            write_real(fakes, args.items, sources=list(BUILT), full_counts=True, counts={"medmnist": 4})
            print(f"fakes written to {fakes} in {time.perf_counter() - started:.0f} s", flush=True)
        load = os.getloadavg()
        rows = []
        for source_id in BUILT:
            for variant in sorted(variants(source_id)[1], key=int):
                rows += compare(fakes, source_id, variant, args.cpu, Path(scratch))
    headers = ["conversion", "size", "items", "costs.yaml key", "plan ms/item", "build ms/item", "build / plan",
               "plan bytes/item", "build bytes/item", "build / plan"]  # fmt: skip
    print(f"\nload average at the start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} ({os.cpu_count()} CPUs)")
    print("seconds per item: CPU time of the whole job on one core, start-ups included\n")
    print(tables.render(headers, rows))
    print("\nas markdown (docs/benchmarks.md):\n")
    print("| " + " | ".join(headers) + " |\n|" + "---|" * 3 + "---|" + "---:|" * 6)
    print("\n".join("| " + " | ".join(row) + " |" for row in rows))
    subprocess.run(["uptime"], check=False)
    return 1 if any(row[6].endswith("!") or row[9].endswith("!") for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
