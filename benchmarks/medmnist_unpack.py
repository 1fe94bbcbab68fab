"""Unpack the same MedMNIST npz with this pipeline and with `python -m medmnist save`; print images/s.

Both run as whole processes (start-up included), on fake archives with MedMNIST's keys, dtypes and shapes:
a BloodMNIST-sized test split (3,421 RGB images) at 28 px, and 1,000 RGB images at 224 px. The reference
tool also writes the train and val splits; they hold one image each here, so it does the same work.

    python benchmarks/medmnist_unpack.py [--repeats 3] [--out benchmarks/out]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from timing import fresh_folders, pinned, timed  # noqa: E402

from preprocess.register import observed_files  # noqa: E402
from preprocess.registry import load_registry  # noqa: E402

CASES = [("28", 3421), ("224", 1000)]


def smooth_images(count: int, size: int, seed: int) -> np.ndarray:
    """Images with the smooth structure of real MedMNIST ones (noise does not compress like photos)."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, size=(count, 8, 8, 3)).astype(np.float32)
    factor = -(-size // 8)
    images = np.kron(coarse, np.ones((1, factor, factor, 1), np.float32))[:, :size, :size]
    images += rng.normal(0, 6, images.shape)
    return np.clip(images, 0, 255).astype(np.uint8)


def make_raw(root: Path, size: str, count: int) -> Path:
    arrays = {}
    for split, n in (("train", 1), ("val", 1), ("test", count)):
        arrays[f"{split}_images"] = smooth_images(n, int(size), seed=n)
        arrays[f"{split}_labels"] = (np.arange(n) % 8).reshape(-1, 1).astype(np.uint8)
    name = "bloodmnist.npz" if size == "28" else f"bloodmnist_{size}.npz"
    (root / "raw" / "MedMNIST").mkdir(parents=True, exist_ok=True)
    np.savez_compressed(root / "raw" / "MedMNIST" / name, **arrays)
    registry = load_registry(variants={"medmnist": size})
    files, _ = observed_files(registry.source("medmnist"), root / "raw")
    (root / "overrides.yaml").write_text(yaml.safe_dump({"sources": {"medmnist": {"files": files}}}))
    config = {
        "raw_root": str(root / "raw"),
        "data_basedir": str(root / "DATA"),
        "subsets": ["BloodMNIST"],
        "registry_overrides": str(root / "overrides.yaml"),
        "source_variants": {"medmnist": size},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "medmnist")
    args = parser.parse_args()
    rows = []
    with fresh_folders(args.out / "outputs") as folders:  # one deletion at the very end: see timing.py
        for size, count in CASES:
            root = make_raw(args.out / f"size{size}", size, count)
            runs = {  # output folder -> command
                "medmnist save (1 core)": lambda out, r=root, s=size: pinned(reference(r, s, out), "0"),
                "pipeline, 1 worker (1 core)": lambda out, r=root: pinned(pipeline(r, out, 1), "0"),
                "pipeline, 2 workers (2 cores)": lambda out, r=root: pinned(pipeline(r, out, 2), "0,1"),
            }
            seconds = {name: [] for name in runs}
            unpacking = {name: [] for name in runs}
            # Untimed: the raw check's MD5 of the npz is cached (as in a workflow run, where it is a job of
            # its own), and the archive is in the page cache for both tools.
            timed(runs["pipeline, 1 worker (1 core)"](next(folders)))
            for _ in range(args.repeats):  # interleaved, so drift of the machine hits all alike
                for name, command in runs.items():
                    wall, log = timed(command(next(folders)))
                    seconds[name].append(wall)
                    unpacking[name].append(build_seconds(log))
            rows += table_rows(f"{size} px, {count} RGB", count, seconds, unpacking)
    print("| images | tool | whole process s | images/s | vs medmnist | vs 1 worker | unpacking s | vs 1 worker |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def pipeline(root: Path, out: Path, workers: int) -> list[str]:
    return [
        *(sys.executable, "-m", "preprocess", "convert", "BloodMNIST"),
        *("--config", str(root / "config.yaml"), "--data-basedir", str(out / "DATA")),
        *("--results", str(root / "results"), "--workers", str(workers)),
    ]


def reference(root: Path, size: str, out: Path) -> list[str]:
    command = [sys.executable, "-m", "medmnist", "save", "--flag=bloodmnist", f"--folder={out}", "--postfix=png"]
    command.append(f"--root={root / 'raw' / 'MedMNIST'}")
    return command if size == "28" else [*command, f"--size={size}"]


def build_seconds(log: str) -> float | None:
    """The pipeline's own timing of plan + build (its 'wrote N entries in X s' line): start-up excluded."""
    found = re.search(r"wrote \d+ entries in ([0-9.]+) s", log)
    return float(found.group(1)) if found else None


def table_rows(label: str, count: int, seconds: dict, unpacking: dict) -> list[tuple]:
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    base = count / medians["medmnist save (1 core)"]
    one = medians["pipeline, 1 worker (1 core)"]
    one_unpacking = statistics.median(unpacking["pipeline, 1 worker (1 core)"])
    rows = []
    for name, median in medians.items():
        inner = None if None in unpacking[name] else statistics.median(unpacking[name])
        rows.append(
            (
                label,
                name,
                f"{median:.2f}",
                f"{count / median:,.0f}",
                f"{count / median / base:.1f}x",
                f"{one / median:.2f}x",
                "-" if inner is None else f"{inner:.2f}",
                "-" if inner is None else f"{one_unpacking / inner:.2f}x",
            )
        )
    return rows


if __name__ == "__main__":
    main()
