"""Time the output writer (preprocess/convert/outputs.py `write_bytes`) per image, this checkout's against
another revision's file, in one process.

Each run writes `--count` new PNGs (one 28x28 uint8 gray image, TissueMNIST's size and dtype, encoded by the
pipeline's own encoder; the same bytes under new names) into 10 class folders of a fresh DATA_BASEDIR, as a
MedMNIST job does. The two writers alternate, the one that goes first alternating with the repeats; each run
gets its own never-used folder (benchmarks/timing.py `fresh_folders`: file creation right after a mass
deletion measures the file system). Prints the median microseconds per write, wall and CPU, of each.

    python benchmarks/output_writes.py --before /path/to/other/checkout/preprocess/convert/outputs.py
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import numpy as np  # noqa: E402
from timing import fresh_folders  # noqa: E402

from preprocess.convert import outputs  # noqa: E402
from preprocess.formats.pngio import encode_png  # noqa: E402

CLASSES = 10


def load_writer(path: Path):
    """The module at `path` (another revision's outputs.py), imported under its own name."""
    spec = importlib.util.spec_from_file_location("outputs_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def one_run(module, folder: Path, count: int, png: bytes) -> tuple[float, float]:
    """(wall us, CPU us) per write of `count` new files under `folder` (a DATA_BASEDIR)."""
    module.set_part_tag("bench")  # a job's start: the writer forgets the folders it checked
    names = [str(folder / "2D_Images" / "X" / f"class_{n % CLASSES}" / f"test_{n:06d}.png") for n in range(count)]
    wall, cpu = time.perf_counter(), time.process_time()
    for name in names:
        module.write_bytes(name, png, folder, False)
    return (time.perf_counter() - wall) / count * 1e6, (time.process_time() - cpu) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the other revision's outputs.py")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    png = encode_png(rng.integers(0, 256, (28, 28), dtype=np.uint8))
    writers = {"before": load_writer(args.before), "after": outputs}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in writers}
    with fresh_folders(REPO / "benchmarks" / "out" / "output_writes") as folders:
        for repeat in range(args.repeats):
            order = list(writers) if repeat % 2 == 0 else list(reversed(writers))
            for name in order:
                times[name].append(one_run(writers[name], next(folders), args.count, png))
    print(f"{args.count} writes of a {len(png)}-byte PNG into {CLASSES} folders, {args.repeats} repeats (median):")
    for name, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"  {name}: {wall:.1f} us wall, {cpu:.1f} us CPU per write")
    for index, what in enumerate(("wall", "CPU")):
        ratios = [a[index] / b[index] for a, b in zip(times["after"], times["before"], strict=True)]
        print(f"  after/before {what} within a repeat: median {statistics.median(ratios):.3f}, "
              f"{min(ratios):.3f}-{max(ratios):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
