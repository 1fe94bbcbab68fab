"""Unpack the same MedMNIST npz with this pipeline and with `python -m medmnist save`; print images/s.

Fake archives with MedMNIST's keys, dtypes and shapes: a BloodMNIST-sized test split (3,421 RGB images) at
28 px, 1,000 RGB images at 224 px, and a TissueMNIST-sized test split (47,280 gray images) at 28 px. The train
and val splits hold one image each, so the reference tool (which writes every split) does the same work.

Every run is a whole process (start-up included: imports, registry, the cached raw check) writing into a new
folder; runs are interleaved and medians reported. "unpacking s" is the pipeline's own timing of its
conversion (the "wrote N entries in X s" line of its log): reading the npz, encoding, writing, the manifest.
"file creation us" is the cost of creating one small file on the output disk, measured before and after each
case's runs: 30-60 us on a quiet ext4 disk, more while another process creates or deletes files (the runs
write one file per image, so their figures carry that cost; the wait for a quiet disk is bounded, timing.py).

The file-creation floor (tool "floor", benchmarks/creation_floor.py) writes the files of the case's tree again
into a new folder, the same names, bytes and class folders in the same order, each as an atomic writer must
(temporary name, write, close, rename), pinned to the pipeline's CPU, in its own process, interleaved with the
other runs. The second table sets the pipeline's unpacking on one worker against it, within each repeat.

    python benchmarks/medmnist_unpack.py [--repeats 3] [--out benchmarks/out/medmnist] [--cases blood28,...]
        [--tools medmnist,pipeline1,pipeline2,lookfirst,floor]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from timing import build_seconds, file_creation_us, fresh_folders, pinned, require_tool, timed  # noqa: E402

from preprocess.rawdata.register import observed_files  # noqa: E402
from preprocess.registry.loader import load_registry  # noqa: E402


@dataclass(frozen=True)
class Case:
    flag: str
    subset: str
    size: str
    count: int
    channels: int

    @property
    def label(self) -> str:
        return f"{self.subset} {self.size} px, {self.count:,} {'RGB' if self.channels == 3 else 'gray'}"


CASES = {
    "blood28": Case("bloodmnist", "BloodMNIST", "28", 3421, 3),
    "blood224": Case("bloodmnist", "BloodMNIST", "224", 1000, 3),
    "tissue28": Case("tissuemnist", "TissueMNIST", "28", 47280, 1),
}


def smooth_images(count: int, size: int, channels: int, seed: int) -> np.ndarray:
    """Images with the smooth structure of real MedMNIST ones (noise does not compress like photos)."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, size=(count, 8, 8, channels)).astype(np.float32)
    factor = -(-size // 8)
    images = np.kron(coarse, np.ones((1, factor, factor, 1), np.float32))[:, :size, :size]
    images += rng.normal(0, 6, images.shape)
    images = np.clip(images, 0, 255).astype(np.uint8)
    return images if channels == 3 else images[..., 0]


def make_raw(root: Path, case: Case) -> Path:
    arrays = {}
    for split, n in (("train", 1), ("val", 1), ("test", case.count)):
        arrays[f"{split}_images"] = smooth_images(n, int(case.size), case.channels, seed=n)
        arrays[f"{split}_labels"] = (np.arange(n) % 8).reshape(-1, 1).astype(np.uint8)
    name = f"{case.flag}.npz" if case.size == "28" else f"{case.flag}_{case.size}.npz"
    (root / "raw" / "MedMNIST").mkdir(parents=True, exist_ok=True)
    np.savez_compressed(root / "raw" / "MedMNIST" / name, **arrays)
    registry = load_registry(variants={"medmnist": case.size})
    files, _ = observed_files(registry.source("medmnist"), root / "raw")
    (root / "overrides.yaml").write_text(yaml.safe_dump({"sources": {"medmnist": {"files": files}}}))
    config = {
        "raw_root": str(root / "raw"),
        "data_basedir": str(root / "DATA"),
        "subsets": [case.subset],
        "registry_overrides": str(root / "overrides.yaml"),
        "source_variants": {"medmnist": case.size},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return root


# --tools: what each run is called in the tables.
TOOLS = {
    "medmnist": "medmnist save (1 core)",
    "pipeline1": "pipeline, 1 worker (1 core)",
    "pipeline2": "pipeline, 2 workers (2 cores)",
    "lookfirst": "pipeline, 1 worker, without renameat2 (1 core)",
    "floor": "file-creation floor (1 core)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "medmnist")
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of: {', '.join(CASES)}")
    parser.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, of: {', '.join(TOOLS)}")
    args = parser.parse_args()
    tools = args.tools.split(",")
    unknown = set(tools) - TOOLS.keys()
    if unknown:
        parser.error(f"unknown tools {', '.join(sorted(unknown))}; known: {', '.join(TOOLS)}")
    if "medmnist" in tools:
        require_tool("medmnist")  # before minutes of measuring, not in the first reference run
    rows, floor_rows = [], []
    with fresh_folders(args.out / "outputs") as folders:  # one deletion at the very end: see timing.py
        for key in args.cases.split(","):
            case = CASES[key]
            root = make_raw(args.out / key, case)
            # Untimed: the raw check's MD5 of the npz is cached (as in a workflow run, where it is a job of
            # its own), and the archive is in the page cache for both tools. Its tree is what the floor writes.
            warm = next(folders)
            timed(pinned(pipeline(root, case, warm, 1), "0"))
            tree = warm / "DATA" / "2D_Images" / case.subset
            commands = {  # output folder -> command
                "medmnist": lambda out, r=root, c=case: pinned(reference(r, c, out), "0"),
                "pipeline1": lambda out, r=root, c=case: pinned(pipeline(r, c, out, 1), "0"),
                "pipeline2": lambda out, r=root, c=case: pinned(pipeline(r, c, out, 2), "0,1"),
                "lookfirst": lambda out, r=root, c=case: pinned(look_first(pipeline(r, c, out, 1)), "0"),
                "floor": lambda out, t=tree: pinned(
                    [sys.executable, str(FLOOR), "--tree", str(t), "--out", str(out)], "0"
                ),
            }
            runs = {TOOLS[tool]: commands[tool] for tool in tools}
            seconds = {name: [] for name in runs}
            unpacking = {name: [] for name in runs}
            creation_us = [file_creation_us(next(folders))]
            for _ in range(args.repeats):  # interleaved, so drift of the machine hits all alike
                for name, command in runs.items():
                    wall, log = timed(command(next(folders)))
                    seconds[name].append(wall)
                    unpacking[name].append(floor_seconds(log) if name == TOOLS["floor"] else build_seconds(log))
                    print(f"{key} {name}: {wall:.2f} s whole, {unpacking[name][-1]} s unpacking", file=sys.stderr)
            creation_us.append(file_creation_us(next(folders)))
            rows += table_rows(case.label, case.count, seconds, unpacking, creation_us)
            if {"pipeline1", "floor"} <= set(tools):
                floor_rows.append(floor_row(case.label, unpacking[TOOLS["pipeline1"]], unpacking[TOOLS["floor"]]))
            if {"lookfirst", "floor"} <= set(tools):
                label = f"{case.label}, without renameat2"
                floor_rows.append(floor_row(label, unpacking[TOOLS["lookfirst"]], unpacking[TOOLS["floor"]]))
    print(
        "| images | tool | whole process s | images/s | vs medmnist | vs 1 worker | unpacking s | vs 1 worker "
        "| file creation us |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if floor_rows:
        print()
        print(
            "| images | unpacking s, 1 worker | file-creation floor s | unpacking / floor (within a repeat, min-max) |"
        )
        print("|---|---:|---:|---:|")
        for row in floor_rows:
            print("| " + " | ".join(row) + " |")


FLOOR = Path(__file__).resolve().parent / "creation_floor.py"

# The same convert with preprocess/formats/noreplace.py switched off in its process, as on a system without
# renameat2: every output's name is looked at (os.access) before the plain rename. What the hand-written
# call is worth, measured in the same run.
_LOOK_FIRST = (
    "import runpy, sys; from preprocess.formats import noreplace; noreplace._STATE['renameat2'] = None; "
    "sys.argv = ['preprocess', *sys.argv[1:]]; runpy.run_module('preprocess', run_name='__main__')"
)


def look_first(command: list[str]) -> list[str]:
    """`python -m preprocess ARGS` as `python -c <noreplace off, then preprocess> ARGS`."""
    assert command[1:3] == ["-m", "preprocess"], command
    return [command[0], "-c", _LOOK_FIRST, *command[3:]]


def floor_seconds(log: str) -> float:
    """The floor's own timing of its file creation (its 'created N files in X s' line)."""
    return float(re.search(r"created \d+ files in ([0-9.]+) s", log).group(1))


def floor_row(label: str, unpacking: list[float], floor: list[float]) -> tuple:
    """The pipeline's unpacking on one worker against the file-creation floor, medians and per-repeat ratios."""
    ratios = [one / least for one, least in zip(unpacking, floor, strict=True)]
    spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
    return (
        label,
        f"{statistics.median(unpacking):.2f}",
        f"{statistics.median(floor):.2f}",
        f"{statistics.median(ratios):.2f}x ({spread})",
    )


def pipeline(root: Path, case: Case, out: Path, workers: int) -> list[str]:
    (out / "DATA").mkdir(parents=True, exist_ok=True)  # the CLI asks for an existing DATA_BASEDIR
    return [
        *(sys.executable, "-m", "preprocess", "convert", case.subset),
        *("--config", str(root / "config.yaml"), "--data-basedir", str(out / "DATA")),
        *("--results", str(root / "results"), "--workers", str(workers)),
    ]


def reference(root: Path, case: Case, out: Path) -> list[str]:
    command = [sys.executable, "-m", "medmnist", "save", f"--flag={case.flag}", f"--folder={out}", "--postfix=png"]
    command.append(f"--root={root / 'raw' / 'MedMNIST'}")
    return command if case.size == "28" else [*command, f"--size={case.size}"]


def table_rows(label: str, count: int, seconds: dict, unpacking: dict, creation_us: list[float]) -> list[tuple]:
    """One row per tool: medians of its runs, and the cost of creating a file before and after the case's runs."""
    medians = {name: statistics.median(values) for name, values in seconds.items() if name != TOOLS["floor"]}
    reference, one_name = TOOLS["medmnist"], TOOLS["pipeline1"]
    base = count / medians[reference] if reference in medians else None  # "-" where a tool was not run
    one = medians.get(one_name)
    one_unpacking = statistics.median(unpacking[one_name]) if one_name in unpacking else None
    rows = []
    for name, median in medians.items():
        inner = None if None in unpacking[name] else statistics.median(unpacking[name])
        rows.append(
            (
                label,
                name,
                f"{median:.2f}",
                f"{count / median:,.0f}",
                "-" if base is None else f"{count / median / base:.1f}x",
                "-" if one is None else f"{one / median:.2f}x",
                "-" if inner is None else f"{inner:.2f}",
                "-" if inner is None or one_unpacking is None else f"{one_unpacking / inner:.2f}x",
                " / ".join(f"{us:.0f}" for us in creation_us),
            )
        )
    return rows


if __name__ == "__main__":
    main()
