"""Per-item cost at steady state of two revisions of the pipeline, on the same raw files: did a change slow it?

Written for issue 27's acceptance ("volume and MedMNIST benchmarks re-measured at steady state within 3% of
before"): BEFORE (default 42b542d) still parses NIfTI-1 and .npy headers with our own code, AFTER (default
031edad) reads them with nibabel and numpy.lib.format. Each revision is checked out with `git worktree add
--detach` into a temporary folder (removed at the end) and runs its own code: `python -m preprocess convert`
with PYTHONPATH=<its worktree> and its worktree as the working directory, under this same interpreter (the
script first checks that `import preprocess` finds that worktree, not the editable install of the venv).

Cases (each a raw tree written once under --out/raw and kept for later runs; each revision gets its own
registry overrides and config, written by its own `observed_files`, its own results folder per tree and a new
DATA_BASEDIR for every run):
  volumes    CT_RATE, 1 worker: --volumes (16) synthetic CT-RATE volumes (benchmarks/volume_path.py's phantom,
             512x512x300 int16, gzip level 6), against the first --small-volumes (2) of them (hard links)
  tissue28   TissueMNIST test split, 47,280 gray 28 px images (train and val one image each), against 500
  blood224   BloodMNIST test split at 224 px, 3,421 RGB images, against 50

Per-item cost by difference: (t_big - t_small) / (n_big - n_small) from the runs of one repeat, so that what
every process pays once (interpreter, imports, registry and schema checks, raw check) cancels. Wall seconds,
and CPU seconds (user + system of the process and the children it waited for, os.wait4). Runs alternate
before/after over --repeats, the first of the two alternating too (AB, BA, ...), each revision's big run and
small run back to back; one untimed run per revision and tree first (its results folder's raw check cache,
bytecode, page cache). Printed: the medians over the repeats, the ratio of the medians (after/before; "> 3%"
flags one above 1.03) and the median of the ratios within each repeat, which a machine whose speed drifts
over minutes disturbs less.

Pixels: every file the two revisions wrote into DATA_BASEDIR in the last big run of each case is compared by
SHA-256; the script stops if any PNG differs or is missing on one side, and names other files that differ.

Every command, and this script's own work (generating the raw data, hashing), runs on CPU --cpu only
(`taskset -c 1` by default: leave CPU 0 to whoever works there); the load average and each CPU's busy share
over the timed runs are printed with the figures.

    python benchmarks/before_after.py [--before REV] [--after REV] [--repeats 3] [--cpu 1]
        [--cases volumes,tissue28,blood224] [--volumes 16] [--small-volumes 2] [--tissue-images 47280]
        [--blood-images 3421] [--out benchmarks/out/before_after]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medmnist_unpack import smooth_images  # noqa: E402
from timing import build_seconds, fresh_folders, pinned  # noqa: E402
from volume_path import make_raw as make_volumes  # noqa: E402

BEFORE = "42b542d5fe81d656ea91fb828e598344afe06db0"  # own NIfTI-1 and .npy header parsers
AFTER = "031edad"  # nibabel and numpy.lib.format read the headers

# Run by each revision's interpreter under its own PYTHONPATH: its registry overrides (the raw files as its
# own code sees them) and its config for one raw tree.
SETUP = """
import sys
from pathlib import Path
import yaml
try:  # the package's folders since issue 27's layout
    from preprocess.rawdata.register import observed_files
    from preprocess.registry.loader import load_registry
except ImportError:  # a revision from before it
    from preprocess.register import observed_files
    from preprocess.registry import load_registry
source, raw, folder, subset, variant = sys.argv[1:6]
variants = {source: variant} if variant else None
files, absent = observed_files(load_registry(variants=variants).source(source), Path(raw))
folder = Path(folder)
folder.mkdir(parents=True, exist_ok=True)
(folder / "overrides.yaml").write_text(yaml.safe_dump({"sources": {source: {"files": files}}}))
config = {"raw_root": raw, "data_basedir": str(folder / "DATA"), "subsets": [subset],
          "registry_overrides": str(folder / "overrides.yaml")}
if variants:
    config["source_variants"] = variants
(folder / "config.yaml").write_text(yaml.safe_dump(config))
print(absent)
"""


@dataclass(frozen=True)
class Case:
    key: str
    subset: str  # what `convert` is given
    source: str
    variant: str  # the source variant ("" for none)
    unit: str
    big: int
    small: int


def cases(args) -> dict[str, Case]:
    return {
        "volumes": Case("volumes", "3D_Task/CT_RATE", "ct_rate", "", "volume", args.volumes, args.small_volumes),
        "tissue28": Case("tissue28", "TissueMNIST", "medmnist", "28", "image", args.tissue_images, 500),
        "blood224": Case("blood224", "BloodMNIST", "medmnist", "224", "image", args.blood_images, 50),
    }


def raw_trees(case: Case, folder: Path) -> dict[str, Path]:
    """The raw roots of the big and the small run of a case, written when missing."""
    if case.key == "volumes":
        big = folder / f"volumes-{case.big}"
        paths = make_volumes(big, case.big)  # skips volumes already there; its config is not used
        small = folder / f"volumes-{case.big}-first-{case.small}"
        for path in [
            *paths[: case.small],
            big / "raw" / "CT-RATE" / "dataset" / "metadata" / "validation_metadata.csv",
        ]:
            target = small / path.relative_to(big)
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(path, target)  # the same bytes, read from the same page cache
        return {"big": big / "raw", "small": small / "raw"}
    return {size: medmnist_npz(case, folder / f"{case.key}-{count}", count) for size, count in _sizes(case)}


def _sizes(case: Case):
    return (("big", case.big), ("small", case.small))


def medmnist_npz(case: Case, root: Path, count: int) -> Path:
    """A fake MedMNIST archive: `count` test images, one train and one val image (as medmnist_unpack.py)."""
    flag = case.subset.lower()
    name = f"{flag}.npz" if case.variant == "28" else f"{flag}_{case.variant}.npz"
    path = root / "raw" / "MedMNIST" / name
    if path.exists():
        return root / "raw"
    size, channels = int(case.variant), 1 if case.subset == "TissueMNIST" else 3
    arrays = {}
    for split, n in (("train", 1), ("val", 1), ("test", count)):
        # in blocks of 256: the float copies of a 224 px RGB split at once would take 6 GB
        blocks = [smooth_images(min(256, n - k), size, channels, seed=n + k) for k in range(0, n, 256)]
        arrays[f"{split}_images"] = np.concatenate(blocks)
        arrays[f"{split}_labels"] = (np.arange(n) % 8).reshape(-1, 1).astype(np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npz")
    np.savez_compressed(partial, **arrays)
    partial.rename(path)
    return root / "raw"


class Revision:
    """One revision checked out in its own worktree, run with PYTHONPATH set to it."""

    def __init__(self, label: str, rev: str, parent: Path, cpu: str):
        self.label, self.cpu = label, cpu
        self.tree = parent / label
        git = ["git", "-C", str(REPO)]
        subprocess.run([*git, "worktree", "add", "--detach", str(self.tree), rev], check=True, capture_output=True)
        self.commit = subprocess.run(
            [*git, "-C", str(self.tree), "rev-parse", "--short=10", "HEAD"], check=True, capture_output=True, text=True
        ).stdout.strip()
        self.env = {**os.environ, "PYTHONPATH": str(self.tree)}
        found = self.output([sys.executable, "-c", "import preprocess; print(preprocess.__file__)"]).strip()
        if Path(found).resolve() != (self.tree / "preprocess" / "__init__.py").resolve():
            raise SystemExit(f"{label}: `import preprocess` found {found}, not the worktree {self.tree}")
        print(f"{label}: {rev} = {self.commit}, imports {found}", file=sys.stderr)

    def output(self, command: list[str]) -> str:
        done = subprocess.run(pinned(command, self.cpu), cwd=self.tree, env=self.env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{self.label}: {' '.join(command)} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def setup(self, case: Case, raw: Path, folder: Path) -> Path:
        """This revision's overrides and config for one raw tree; returns the config file."""
        self.output([sys.executable, "-c", SETUP, case.source, str(raw), str(folder), case.subset, case.variant])
        return folder / "config.yaml"

    def convert(self, case: Case, config: Path, results: Path, out: Path) -> tuple[float, float, int]:
        """Wall and CPU seconds of one whole `convert` process (1 worker) into a new DATA_BASEDIR, and the
        entries it says it wrote."""
        (out / "DATA").mkdir(parents=True)  # the CLI asks for an existing DATA_BASEDIR
        command = [sys.executable, "-m", "preprocess", "convert", case.subset, "--config", str(config)]
        command += ["--data-basedir", str(out / "DATA"), "--results", str(results), "--workers", "1"]
        os.sync()  # earlier runs' files written back now, not during this run (as timing.timed)
        started = time.perf_counter()
        process = subprocess.Popen(
            pinned(command, self.cpu), cwd=self.tree, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        log = process.stdout.read().decode()  # a few lines
        _, status, usage = os.wait4(process.pid, 0)  # its CPU time with the children it waited for
        wall = time.perf_counter() - started
        process.stdout.close()
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"{self.label}: {' '.join(command)} failed:\n{log[-3000:]}")
        cpu = usage.ru_utime + usage.ru_stime
        entries = _entries(log)
        if build_seconds(log) is None or entries is None:
            raise SystemExit(f"{self.label}: no 'wrote N entries' line in the log of {' '.join(command)}:\n{log}")
        return wall, cpu, entries

    def remove(self) -> None:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(self.tree)], check=False)


def _entries(log: str) -> int | None:
    found = re.search(r"wrote (\d+) entries in", log)
    return int(found.group(1)) if found else None


def digests(folder: Path) -> dict[str, str]:
    """SHA-256 of every regular file under `folder`, by relative path."""
    found = {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                found[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def same_outputs(before: Path, after: Path) -> str:
    """Stop if a PNG differs or is on one side only; else say what was compared and which other files differ."""
    one, two = digests(before), digests(after)
    pngs = sorted(name for name in set(one) | set(two) if name.endswith(".png"))
    differ = [name for name in pngs if one.get(name) != two.get(name)]
    if differ or not pngs:
        raise SystemExit(f"{len(differ)} of {len(pngs)} PNGs differ or are missing on one side, e.g. {differ[:3]}")
    others = sorted(
        name for name in set(one) | set(two) if not name.endswith(".png") and one.get(name) != two.get(name)
    )
    same = len([name for name in set(one) & set(two) if one[name] == two[name]])
    note = f"; other files differing: {', '.join(others)}" if others else ""
    return f"{len(pngs)} PNGs byte-identical (SHA-256), {same} of {len(set(one) | set(two))} files in all{note}"


def cpu_ticks() -> dict[str, tuple[int, int, int]]:
    """(busy, total, steal) clock ticks of every CPU since boot, from /proc/stat (steal: time the hypervisor
    gave to others while this VM's CPU wanted to run)."""
    ticks = {}
    with open("/proc/stat") as handle:
        for line in handle:
            name, *fields = line.split()
            if name.startswith("cpu") and name != "cpu":
                values = [int(v) for v in fields]
                idle = values[3] + values[4]  # idle + iowait
                ticks[name] = (sum(values[:8]) - idle, sum(values[:8]), values[7])
    return ticks


def busy_shares(start: dict, end: dict) -> str:
    shares = []
    for name in sorted(start):
        busy, total, steal = (end[name][k] - start[name][k] for k in (0, 1, 2))
        shares.append(f"{name} {100 * busy / max(total, 1):.0f}% (steal {100 * steal / max(total, 1):.1f}%)")
    return ", ".join(shares)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default=BEFORE, help=f"revision measured first (default {BEFORE[:10]})")
    parser.add_argument("--after", default=AFTER, help=f"revision compared with it (default {AFTER})")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu", default="1", help="the CPU(s) every command and this script run on (taskset -c)")
    parser.add_argument("--cases", default="volumes,tissue28,blood224")
    parser.add_argument("--volumes", type=int, default=16, help="volumes of the big run (the issue asks 16+)")
    parser.add_argument("--small-volumes", type=int, default=2, help="volumes of the small run")
    parser.add_argument("--tissue-images", type=int, default=47280, help="TissueMNIST's test split (against 500)")
    parser.add_argument("--blood-images", type=int, default=3421, help="BloodMNIST's test split at 224 px (against 50)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "before_after")
    args = parser.parse_args()
    os.sched_setaffinity(0, {int(c) for c in args.cpu.split(",")})  # generation and hashing stay there too
    chosen = [cases(args)[key] for key in args.cases.split(",")]
    loads = {"start": os.getloadavg()}
    started = time.monotonic()
    trees = {case.key: raw_trees(case, args.out / "raw") for case in chosen}
    print(f"raw trees ready after {time.monotonic() - started:.0f} s", file=sys.stderr)
    checkout = Path(tempfile.mkdtemp(prefix="before-after-"))
    revisions = []
    try:
        revisions = [
            Revision("before", args.before, checkout, args.cpu),
            Revision("after", args.after, checkout, args.cpu),
        ]
        measured, checked = measure(args, chosen, trees, revisions, loads)
    finally:
        for revision in revisions:
            revision.remove()
        shutil.rmtree(checkout, ignore_errors=True)
    loads["end"] = os.getloadavg()
    report(args, chosen, measured, checked, revisions, loads)


def measure(args, chosen: list[Case], trees: dict, revisions: list[Revision], loads: dict) -> tuple[dict, dict]:
    # measured[case][revision][size] = list of (wall, cpu) per repeat
    measured = {c.key: {r.label: {"big": [], "small": []} for r in revisions} for c in chosen}
    checked = {}
    with fresh_folders(args.out / "outputs") as folders:  # one deletion at the very end: see timing.py
        configs, results = {}, {}
        for case in chosen:
            for revision in revisions:
                for size, raw in trees[case.key].items():
                    folder = next(folders)
                    configs[case.key, revision.label, size] = revision.setup(case, raw, folder)
                    results[case.key, revision.label, size] = folder / "results"
                    # Untimed: the raw check's cache in this results folder, bytecode, raw files in the page cache
                    _, _, entries = revision.convert(
                        case, configs[case.key, revision.label, size], folder / "results", next(folders)
                    )
                    print(f"{case.key} {revision.label} {size}: warm-up, {entries} entries", file=sys.stderr)
        ticks = cpu_ticks()
        loads["timed start"] = os.getloadavg()
        last = {}
        counts = {}
        for repeat in range(args.repeats):
            # Before and after alternate, and which goes first alternates with the repeats (AB, BA, ...), so
            # that a machine speeding up or slowing down favours neither; a revision's big and small run go
            # back to back, so that its per-item difference sees one state of the machine.
            order = revisions if repeat % 2 == 0 else revisions[::-1]
            for case in chosen:
                for revision in order:
                    for size in ("big", "small"):
                        out = next(folders)
                        key = case.key, revision.label, size
                        wall, cpu, entries = revision.convert(case, configs[key], results[key], out)
                        if counts.setdefault((case.key, size), entries) != entries:
                            raise SystemExit(f"{key}: wrote {entries} entries, another run {counts[case.key, size]}")
                        measured[case.key][revision.label][size].append((wall, cpu))
                        last[key] = out / "DATA"
                        load = os.getloadavg()[0]
                        print(
                            f"{repeat + 1}: {case.key} {size} {revision.label}: {wall:.2f} s, CPU {cpu:.2f} s, "
                            f"{entries} entries, load {load:.2f}",
                            file=sys.stderr,
                        )
        loads["timed end"] = os.getloadavg()
        loads["busy"] = busy_shares(ticks, cpu_ticks())
        for case in chosen:
            checked[case.key] = same_outputs(last[case.key, "before", "big"], last[case.key, "after", "big"])
            print(f"{case.key}: {checked[case.key]}", file=sys.stderr)
    return measured, checked


def per_item(runs: dict, case: Case, which: int) -> list[float]:
    """Seconds per item of each repeat, by difference of its big and small run (which: 0 wall, 1 CPU)."""
    return [
        (big[which] - small[which]) / (case.big - case.small)
        for big, small in zip(runs["big"], runs["small"], strict=True)
    ]


def report(args, chosen: list[Case], measured: dict, checked: dict, revisions: list[Revision], loads: dict) -> None:
    before, after = revisions
    print(f"before = {args.before} ({before.commit}), after = {args.after} ({after.commit}); {args.repeats} repeats")
    print(f"every command on CPU {args.cpu} (taskset); 1 worker; medians over the repeats; per item = ")
    print("(big run - small run) / (items of big - items of small), from the same repeat")
    print()
    print(
        "| case | per item | before (median) | min-max | after (median) | min-max | after/before (medians) "
        "| after/before per repeat (median, min-max) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    slower = []
    for case in chosen:
        label = f"{case.key}: {case.big:,} - {case.small:,} {case.unit}s"
        for which, name in ((0, "wall"), (1, "CPU")):
            one = per_item(measured[case.key]["before"], case, which)
            two = per_item(measured[case.key]["after"], case, which)
            ratio = statistics.median(two) / statistics.median(one)
            paired = [b / a for a, b in zip(one, two, strict=True)]  # the same repeat: runs minutes apart at most
            scale, unit = (1, "s") if case.unit == "volume" else (1e6, "us")
            cells = [
                f"{statistics.median(v) * scale:.3f}" if scale == 1 else f"{statistics.median(v) * scale:.1f}"
                for v in (one, two)
            ]
            spreads = [_spread(v, scale) for v in (one, two)]
            flag = " (> 3%)" if ratio > 1.03 else ""
            if flag:
                slower.append(f"{case.key} {name}")
            print(
                f"| {label} | {name} {unit}/{case.unit} | {cells[0]} | {spreads[0]} | {cells[1]} | {spreads[1]} | "
                f"{ratio:.3f}{flag} | {statistics.median(paired):.3f} ({min(paired):.3f}-{max(paired):.3f}) |"
            )
    print()
    print("| case | whole process s (median) | before | after |")
    print("|---|---|---:|---:|")
    for case in chosen:
        for size in ("big", "small"):
            count = case.big if size == "big" else case.small
            cells = [statistics.median(w for w, _ in measured[case.key][r.label][size]) for r in revisions]
            print(f"| {case.key} | {count:,} {case.unit}s | {cells[0]:.2f} | {cells[1]:.2f} |")
    print()
    for case in chosen:
        print(f"- pixels, {case.key}: {checked[case.key]}")
    shown = ", ".join(
        f"{name} {' / '.join(f'{v:.2f}' for v in loads[name])}" for name in ("start", "timed start", "timed end", "end")
    )
    print(f"- load average (1, 5, 15 min) on {os.cpu_count()} CPUs: {shown}")
    print(f"- busy share of each CPU over the timed runs: {loads['busy']}")
    verdict = f"more than 3% slower: {', '.join(slower)}" if slower else "within 3% of before in every case"
    print(f"- after against before, per item at steady state: {verdict}")


def _spread(values: list[float], scale: float) -> str:
    digits = 3 if scale == 1 else 1
    return f"{min(values) * scale:.{digits}f}-{max(values) * scale:.{digits}f}"


if __name__ == "__main__":
    main()
