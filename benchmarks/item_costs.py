"""Measure every conversion's cost per item on real-size fakes and rewrite preprocess/registry/costs.yaml (what
`python -m preprocess plan` multiplies by the item counts).

The real-size fakes (`python -m preprocess demo DIR --real-sizes`, preprocess/demo/real.py) are written once
with 4N items of each source. Each conversion (one per costs.yaml key) then runs as its own process, pinned to
one CPU with taskset, five times per repeat: as each of its four shards (N items each) and as the whole job (4N
items). Time is the job process's CPU time (user + system; the wall time of a shared machine counts the other
users too). The four shards hold the items the whole job holds, with four start-ups where it has one: start-up
(imports, planning, opening archives) = (sum of the shards - whole) / 3, per item at steady state = (whole -
start-up) / 4N. Output files and bytes per item come from the whole job's manifest (exact); peak RSS is the job's
maxrss (its largest process): at 1x the largest of the four shards', at 4x the whole job's. All four shards
count, not one: a source's items differ (VinDr-CXR's alternate uncompressed and JPEG 2000, SynthRAD's CT and MR
of a case), and shard 1 of 4 alone would hold only one sort. Times are medians over the repeats. The machine is
shared: the seconds are noisy, the bytes and files are not.

A source with variants is measured at each (a pass per choice, with the fakes' config of that choice,
DIR/variants/SOURCE-VARIANT/config.yaml): MedMNIST at 28, 64, 128 and 224 px, MedMNIST 3D at 28 and 64,
MedSegBench at 128, 256 and 512, VinDr-Mammo's PhysioNet copy; their keys name the size
(`npz_unpack_2d/bloodmnist@28`, preprocess/sizing/costs.py). Smaller images are written in larger numbers
(COUNTS) so that a job's items cost about a second, above the noise of its start-up.

    python benchmarks/item_costs.py [--cpu 1] [--repeats 2] [--only KEY ...] [--keep DIR | --fakes DIR]
                                    [--resume] [--out preprocess/registry/costs.yaml]

About 10-20 minutes to write the fakes and 30 to measure on a loaded 2-core machine; needs GNU time
(/usr/bin/time, Debian's `time`) and taskset. --keep DIR keeps the fakes, --fakes DIR reuses them, --only
re-measures a few keys into the same file, --resume keeps what a cut run measured today.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from preprocess.convert import ConversionContext, kind_module  # noqa: E402
from preprocess.demo.real import write_real  # noqa: E402
from preprocess.demo.real_npz import variant_folder, variants  # noqa: E402
from preprocess.demo.real_sizes import SIZES  # noqa: E402
from preprocess.errors import PreprocessError  # noqa: E402
from preprocess.formats.manifest import read_manifest  # noqa: E402
from preprocess.registry.config import load_settings  # noqa: E402
from preprocess.registry.loader import load_registry  # noqa: E402
from preprocess.sizing.costs import COSTS, cost_key, fallback_key, split_key  # noqa: E402

SHARDS = 4  # each conversion also runs as each of SHARDS shards: peak memory at 1x and 4x the items
# Items of a source in the whole job (the small job has a quarter): volumes are few and slow, 2D items many and
# fast; every job stays within seconds to a minute on one core.
ITEMS = 16
# A source with sizes gets more of its smaller items (by variant): the items of a job should cost about a second
# of CPU, well above the noise of a start-up (tens of ms), or their per-item time cannot be told from it.
COUNTS = {
    "ct_rate": 4, "radgenome_chestct": 4, "hanseg": 4, "mmdental": 4, "synthrad2023": 4, "brats_ped": 4,
    "brats_men": 4, "cirrmri600": 4, "mrnet": 8, "pannuke": 40,
    "medmnist": {"28": 8000, "64": 3200, "128": 1200, "224": 400},
    "medmnist3d": {"28": 160, "64": 40}, "medsegbench": {"128": 512, "256": 128, "512": 32},
    "rfmid": 8, "m3d_cap": 4, "aptos2019": 12, "vindr_cxr": 12, "vindr_mammo": 12, "mimic_cxr_jpg": 12,
}  # fmt: skip
VOLUME_KINDS = ("volume_slices",)
NOISE = 0.05  # CPU s: what the start-ups of a job's five runs leave uncertain (each varies by some 10-30 ms);
# items that cost less in all are below the resolution: their per item figure is then NOISE / items, a bound


def conversions(settings, keys=None) -> dict[str, tuple]:
    """costs.yaml key -> (subset, conversion): the first test conversion of each key whose sources are written
    at real size (a key measured once, on the subset that comes first)."""
    registry = settings.registry()
    chosen = {}
    for subset in registry.subsets:
        for conversion in subset.conversions:
            if registry.kinds[conversion.kind].module is None:
                continue
            sources = [conversion.params["source"]] if "source" in conversion.params else subset.source_ids
            if not all(s in SIZES for s in sources):
                continue
            key = cost_key(registry, subset, conversion)
            if key not in chosen and (keys is None or key in keys):
                chosen[key] = (subset, conversion)
    return chosen


def passes(sources) -> list[dict]:
    """The config's source_variants of each measuring pass: the defaults, then every other choice of each of
    these sources that has variants (a size of MedMNIST or MedSegBench, VinDr-Mammo's PhysioNet copy)."""
    found = [{}]
    for source_id in sorted(sources):
        default, choices = variants(source_id)
        found += [{source_id: variant} for variant in choices if variant != default]
    return found


def sources_of(keys) -> list[str] | None:
    """The sources the conversions of these costs.yaml keys read, at any variant (None: every source with a
    real-size writer)."""
    if not keys:
        return None
    found = set()
    for chosen in passes(SIZES):
        registry = load_registry(variants=chosen)
        for subset in registry.subsets:
            for conversion in subset.conversions:
                if registry.kinds[conversion.kind].module is None:
                    continue
                if cost_key(registry, subset, conversion) in keys:
                    found.update([conversion.params["source"]] if "source" in conversion.params else subset.source_ids)
    if "chest_imagenome" in found:  # its boxes are on the MIMIC-CXR-JPG images
        found.add("mimic_cxr_jpg")
    return sorted(found & set(SIZES))


def item_count(settings, subset, conversion) -> int:
    registry = settings.registry()
    ctx = ConversionContext(registry, settings, subset, conversion, log=lambda text: None)
    with contextlib.redirect_stdout(io.StringIO()):
        return len(kind_module(registry.kinds[conversion.kind]).plan(ctx))


def run_job(
    config: Path, subset, conversion, shard: int, shards: int, cpu: int, folder: Path
) -> tuple[float, int, int, int]:
    """(CPU seconds, peak RSS bytes, output files, output bytes) of shard `shard`/shards (from 1) as its own
    process.

    CPU time (user + system) of the process, not wall time: on a machine shared by other jobs the wall time
    of a process pinned to one CPU counts the others' share of that CPU too, and is what a job alone on a
    core would take only when the machine is idle. Peak RSS from GNU time, which starts the job: Linux keeps
    a process's maxrss across fork and exec, so the job's own rusage would start at this (large) process's."""
    manifest = folder / f"{conversion.name}-{shard}-{shards}-{time.monotonic_ns()}" / "manifest.tsv"
    manifest.parent.mkdir(parents=True)
    peak = manifest.parent / "peak-kb"
    command = [
        "/usr/bin/time", "-f", "%M", "-o", str(peak),  # the job's own peak (its maxrss is inherited from here)
        "taskset", "-c", str(cpu), sys.executable, "-m", "preprocess", "convert", subset.key,
        "--conversion", conversion.name, "--shard", f"{shard}/{shards}", "--config", str(config),
        "--results", str(folder / "results"), "--manifest", str(manifest),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = usage.ru_utime + usage.ru_stime
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode(errors="replace")
    if process.returncode != 0:
        raise RuntimeError(f"{subset.key}/{conversion.name} shard {shard}/{shards} failed:\n{errors[-2000:]}")
    rows = [row for row in read_manifest(manifest) if row[1] in ("file", "symlink")]
    size = sum(int(detail.split(":", 1)[0]) for _, kind, detail in rows if kind == "file" and ":" in detail)
    return seconds, int(peak.read_text().split()[-1]) * 1024, len(rows), size


def measure(config: Path, settings, key: str, subset, conversion, cpu: int, repeats: int, folder: Path) -> dict:
    items = item_count(settings, subset, conversion)
    small_items = len(range(0, items, SHARDS))  # the largest shard: positions 0, SHARDS, 2 x SHARDS, ...
    quarters, wholes = [], []
    for _ in range(repeats):
        quarters.append([run_job(config, subset, conversion, k, SHARDS, cpu, folder) for k in range(1, SHARDS + 1)])
        wholes.append(run_job(config, subset, conversion, 1, 1, cpu, folder))
    shards_s = statistics.median(sum(r[0] for r in runs) for runs in quarters)
    whole_s = statistics.median(r[0] for r in wholes)
    startup = max(shards_s - whole_s, 0.0) / (SHARDS - 1)
    per_item = max(whole_s - startup, 0.0) / max(items, 1)
    floor, resolution, measured = "", NOISE / max(items, 1), per_item
    if per_item < resolution:  # the items cost less than the noise of two whole runs: a bound, not zero
        per_item, floor = resolution, f"; per item below the resolution, {resolution:.2g} s taken"
    _, whole_rss, files, size = wholes[-1]
    small_rss = max(r[1] for runs in quarters for r in runs)
    whole_rss = max(r[1] for r in wholes)
    print(
        f"{key}: {items} items; {per_item:.3g} s/item (measured {measured:.3g}), start-up {startup:.2f} s; "
        f"{files / items:.2f} files, "
        f"{size / items / 1e6:.3f} MB/item; peak RSS {small_rss / 1e6:.0f} MB at {small_items}, "
        f"{whole_rss / 1e6:.0f} MB at {items} items",
        flush=True,
    )
    return {
        "seconds": float(f"{per_item:.3g}"),  # 3 significant digits: 28 px images take 50 us
        "startup_seconds": round(startup, 2),
        "files": round(files / items, 2),
        "bytes": round(size / items),
        "peak_rss_mb": {small_items: round(small_rss / 1e6), items: round(whole_rss / 1e6)},
        "basis": f"{items} real-size items{_at(key)} ({SIZES[_source(subset, conversion)].item}); {subset.key}{floor}"
        f"; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",  # a busy machine's seconds are others' too
    }


def _at(key: str) -> str:
    """' at size 28' for a key of a size variant (sources.yaml's choice), '' otherwise."""
    variant = split_key(key)[1]
    return f" at size {variant}" if variant and variant.isdigit() else ""


def _source(subset, conversion) -> str:
    return conversion.params.get("source") or subset.source_ids[0]


def stand_ins(old: dict, measured: dict[str, dict]) -> dict[str, dict]:
    """Entries no conversion of the real-size fakes measures directly: a kind's fallback entry (for datasets
    without their own; at every size measured when the kind has one at some size: npz_unpack_2d@28) and a
    recipe built only for train (RadImageNet-VQA alignment) take the dearest measured entry of the same kind and
    variant (per item seconds, then bytes), naming it."""
    filled = {}
    pool = {**{k: v for k, v in old.items() if _measured_here(v)}, **measured}  # this run's and earlier runs'
    kinds_with_fallback = {split_key(k)[0] for k in old if "/" not in k}
    wanted = {k for k in set(old) - set(measured) if not _measured_here(old[k])}
    wanted |= {fallback_key(k) for k in pool if split_key(fallback_key(k))[0] in kinds_with_fallback} - set(pool)
    for key in sorted(wanted):
        siblings = sorted(
            (k for k in pool if fallback_key(k) == fallback_key(key)),
            key=lambda k: (pool[k]["seconds"], pool[k]["bytes"]),
        )
        if siblings:
            dearest = siblings[-1]
            filled[key] = {**pool[dearest], "basis": f"the dearest measured entry of its kind, {dearest}: "
                           + pool[dearest]["basis"]}  # fmt: skip
    return filled


def _measured_here(entry: dict) -> bool:
    """An entry this script measured on the real-size fakes (its basis starts with the item count)."""
    return bool(entry.get("measured")) and entry.get("basis", "").split(" ")[0].isdigit()


def write(out: Path, measured: dict[str, dict], date: str, fill: bool = True) -> None:
    """Merge `measured` into `out`; with `fill`, the entries not measured take stand-ins (the last write)."""
    old = (yaml.safe_load(out.read_text()) or {}).get("costs", {}) if out.exists() else {}
    if fill:
        measured = {**measured, **stand_ins(old, measured)}
    merged = {}
    for key in sorted(set(old) | set(measured)):
        entry = dict(old.get(key, {}))
        if key in measured:
            entry = {"measured": date, **measured[key]}
        merged[key] = entry
    header = (
        "# Per-item costs of each conversion kind (kind/flag, kind/dataset, kind/source; @size where the source has\n"
        "# sizes, the config's source_variants), one core at steady state: seconds, output files and bytes per\n"
        "# item; the start-up of a job; the job's peak RSS (MB) at 1x and 4x the items (items: MB); what they were\n"
        "# measured on and when. Rewritten by benchmarks/item_costs.py on the real-size fakes (python -m\n"
        "# preprocess demo DIR --real-sizes), under load on a shared 2-core machine: seconds are medians and\n"
        "# noisy, bytes and files exact. Item counts are the registry's (subsets.yaml `counts`).\n"
    )
    out.write_text(header + yaml.safe_dump({"costs": merged}, sort_keys=True, width=120))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", type=int, default=1, help="the CPU every job is pinned to (default 1)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each job size, median taken (default 2)")
    parser.add_argument("--volume-repeats", type=int, default=1, help="repeats of the volume kinds (default 1)")
    parser.add_argument("--only", nargs="+", help="only these costs.yaml keys")
    parser.add_argument("--keep", type=Path, help="write the fakes here and keep them (default: a temporary folder)")
    parser.add_argument("--fakes", type=Path, help="reuse fakes written earlier with --keep")
    parser.add_argument("--out", type=Path, default=COSTS)
    parser.add_argument("--resume", action="store_true", help="keep the entries --out got today, measure the rest")
    args = parser.parse_args()
    date = datetime.date.today().isoformat()
    done = {}
    if args.resume and args.out.exists():
        entries = (yaml.safe_load(args.out.read_text()) or {}).get("costs", {})
        done = {
            k: v for k, v in entries.items() if v.get("measured") == date and v.get("basis", "").split(" ")[0].isdigit()
        }
    with tempfile.TemporaryDirectory() as scratch:
        fakes = args.fakes or args.keep or Path(scratch) / "fakes"
        if args.fakes is None:
            started = time.perf_counter()
            write_real(fakes, ITEMS, sources=sources_of(args.only), counts=COUNTS)
            print(f"real-size fakes written to {fakes} in {time.perf_counter() - started:.0f} s", flush=True)
        results = Path(scratch) / "jobs" / "results"  # the checksum cache every job shares, filled first
        measured, tried = {}, set()
        for chosen in passes(SIZES):  # each key once: a key names its variant, the same key in a later pass is skipped
            pass_config = variant_folder(fakes, chosen) / "config.yaml"
            if not pass_config.exists():  # a source of this pass not written (--only)
                continue
            check = [sys.executable, "-m", "preprocess", "check", "--config", str(pass_config)]
            subprocess.run([*check, "--results", str(results)], cwd=REPO, stdout=subprocess.DEVNULL, check=False)
            values = {**yaml.safe_load(pass_config.read_text()), "overwrite_existing": True}
            config = Path(scratch) / f"config-{len(tried)}.yaml"
            config.write_text(yaml.safe_dump(values))
            settings = load_settings(config)
            for key, (subset, conversion) in conversions(settings, args.only).items():
                if key in tried:
                    continue
                tried.add(key)
                repeats = args.volume_repeats if conversion.kind in VOLUME_KINDS else args.repeats
                folder = Path(scratch) / "jobs"
                job_config, job_settings = config, settings
                if conversion.split != "test":  # a conversion built for the train split only
                    job_config = Path(scratch) / f"config-{key.replace('/', '-')}.yaml"
                    job_config.write_text(yaml.safe_dump({**values, "splits": {subset.key: "all"}}))
                    job_settings = load_settings(job_config)
                if key in done:
                    measured[key] = done[key]
                    continue
                try:
                    measured[key] = measure(
                        job_config, job_settings, key, subset, conversion, args.cpu, repeats, folder
                    )
                except (RuntimeError, PreprocessError) as exc:  # reported; the others are still measured
                    print(f"{key}: not measured: {exc}", flush=True)
                    continue
                write(args.out, {key: measured[key]}, date, fill=False)  # as it goes: --resume continues a cut run
    write(args.out, measured, date)
    print(f"wrote {args.out}: {len(measured)} entries measured")


if __name__ == "__main__":
    main()
