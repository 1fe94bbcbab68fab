"""Unpack the same MedMNIST npz with this pipeline and with `python -m medmnist save`; print images/s.

Both run as whole processes (start-up included), on fake archives with MedMNIST's keys, dtypes and shapes:
a BloodMNIST-sized test split (3,421 RGB images) at 28 px, and 1,000 RGB images at 224 px. The reference
tool also writes the train and val splits; they hold one image each here, so it does the same work.

    python benchmarks/medmnist_unpack.py [--repeats 3] [--out benchmarks/out]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from timing import pinned, timed  # noqa: E402

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
    for size, count in CASES:
        root = make_raw(args.out / f"size{size}", size, count)
        ours = [
            sys.executable,
            "-m",
            "preprocess",
            "convert",
            "BloodMNIST",
            "--config",
            str(root / "config.yaml"),
            "--results",
            str(root / "results"),
        ]
        reference = [
            sys.executable,
            "-m",
            "medmnist",
            "save",
            "--flag=bloodmnist",
            f"--folder={root / 'ref'}",
            "--postfix=png",
            f"--root={root / 'raw' / 'MedMNIST'}",
        ]
        if size != "28":
            reference.append(f"--size={size}")
        runs = {
            "medmnist save (1 core)": (pinned(reference, "0"), root / "ref"),
            "pipeline, 1 worker (1 core)": (pinned([*ours, "--workers", "1"], "0"), root / "DATA"),
            "pipeline, 2 workers (2 cores)": (pinned([*ours, "--workers", "2"], "0,1"), root / "DATA"),
        }
        seconds = {name: [] for name in runs}
        for _ in range(args.repeats):  # interleaved, so drift of the machine hits all alike
            for name, (command, clean) in runs.items():
                seconds[name].append(timed(command, clean))
        medians = {name: statistics.median(values) for name, values in seconds.items()}
        base = count / medians["medmnist save (1 core)"]
        one = count / medians["pipeline, 1 worker (1 core)"]
        for name, median in medians.items():
            rate = count / median
            rows.append(
                (
                    f"{size} px, {count} RGB",
                    name,
                    f"{median:.2f}",
                    f"{rate:,.0f}",
                    f"{rate / base:.1f}x",
                    f"{rate / one:.2f}x",
                )
            )
    print("| images | tool | seconds (median) | images/s | vs medmnist | vs 1 worker |")
    print("|---|---|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
