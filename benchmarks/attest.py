"""Fingerprint a scaled-up demo tree with `attest` and check it with `validate --decode full`; print images/s.

The demo is built once (every subset its raw data allows, in this process), then scaled up: every image a task
file names as a regular file (not through the MIMIC-CXR links) gets `--copies` copies, each upscaled
`--upscale` times (nearest neighbour: the demo's 32 px images would measure file opening, not decoding) and
written in its own format under <image root>/copy<k>/, and every task record is repeated once per copy with its
paths renamed. Both commands then read the same task files and decode the same images.

Every run is a whole process (start-up included) reading the same tree from the page cache (one untimed run
of each first); runs are interleaved and medians reported. "vs validate" is validate's median time over the
command's: above 1, the command is faster than a full validation.

    python benchmarks/attest.py [--copies 10] [--upscale 8] [--repeats 3] [--out benchmarks/out/attest]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from timing import pinned, timed  # noqa: E402

from preprocess.demo import write_demo  # noqa: E402
from preprocess.pipeline import steps  # noqa: E402
from preprocess.readiness.buildable import BUILD, decide_subsets  # noqa: E402
from preprocess.registry import layout  # noqa: E402
from preprocess.registry.config import settings_from_dict  # noqa: E402
from preprocess.release import records  # noqa: E402
from preprocess.release.records import PARSERS  # noqa: E402


def build_demo(folder: Path) -> dict:
    """The demo under `folder`, built; returns its config values."""
    demo = write_demo(folder / "demo")
    values = {
        "raw_root": str(demo / "raw"),
        "data_basedir": str(demo / "DATA_BASEDIR"),
        "registry_overrides": str(demo / "registry-overrides.yaml"),
        "subsets": "all",
    }
    settings = settings_from_dict(values)
    build = steps.Build(settings)
    checks = build.check(sources=sorted(build.registry.sources))
    for plan in decide_subsets(build.registry, "all", checks, settings):
        if plan.action == BUILD:
            build.convert(subset=plan.subset, checks=checks)
    return values


def scale_up(values: dict, copies: int, upscale: int) -> int:
    """Copies of every image the task files name, and of their records; returns the images added."""
    settings = settings_from_dict(values)
    data = settings.data_basedir
    registry = settings.registry()
    added = 0
    for subset in registry.subsets:
        for task in subset.tasks:
            path = layout.task_dir(data, subset) / task.file
            root = layout.task_image_root(data, task)
            if root is None or not path.is_file() or not root.is_dir():
                continue
            rows = json.loads(path.read_text(encoding="utf-8"))
            fields = PARSERS[task.parser][1]
            scaled = list(rows)
            for k in range(copies):
                for index, row in enumerate(rows):
                    refs = records.task_record_images(index, row, task.parser)
                    if not refs or not all(_plain_file(root / ref.path) for ref in refs):
                        continue  # a text query, or an image through a link: not copied
                    for ref in refs:
                        added += _copy_image(root / ref.path, root / f"copy{k}" / ref.path, upscale)
                    scaled.append({**row, **{f: _renamed(row.get(f), f"copy{k}/") for f in fields if f in row}})
            path.write_text(json.dumps(scaled), encoding="utf-8")
    return added


def _plain_file(path: Path) -> bool:
    return path.is_file() and path.resolve().parent == path.parent


def _renamed(value, prefix: str):
    if isinstance(value, str):
        return prefix + value if value else value
    if isinstance(value, list):
        return [_renamed(item, prefix) for item in value]
    return value


def _copy_image(source: Path, target: Path, upscale: int) -> int:
    if target.exists():
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(source) as image:
        image.load()
        bigger = image.resize((image.width * upscale, image.height * upscale), Image.Resampling.NEAREST)
        bigger.save(target, format=image.format)
    return 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--upscale", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "attest")
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    values = build_demo(args.out)
    added = scale_up(values, args.copies, args.upscale)
    config = args.out / "config.json"
    config.write_text(json.dumps(values))
    tree = values["data_basedir"]
    common = ["--config", str(config), "--results", str(args.out / "results")]
    cli = [sys.executable, "-m", "preprocess"]
    runs = {
        "validate --decode full (1 core)": pinned([*cli, "validate", tree, "--decode", "full", *common], "0"),
        "attest, 1 worker (1 core)": pinned([*cli, "attest", tree, "--out", str(args.out / "1.tsv"), *common], "0"),
        "attest, 2 workers (2 cores)": pinned(
            [*cli, "attest", tree, "--out", str(args.out / "2.tsv"), "--workers", "2", *common], "0,1"
        ),
    }
    seconds = {name: [] for name in runs}
    for command in runs.values():  # untimed: the tree in the page cache, the checks cached
        timed(command)
    for _ in range(args.repeats):  # interleaved, so drift of the machine hits all alike
        for name, command in runs.items():
            wall, _ = timed(command)
            seconds[name].append(wall)
            print(f"{name}: {wall:.2f} s", file=sys.stderr)
    lines = (args.out / "1.tsv").read_text(encoding="utf-8").splitlines()
    images = sum(not line.startswith("#") for line in lines) - 1  # the column names
    assert (args.out / "1.tsv").read_bytes() == (args.out / "2.tsv").read_bytes()
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    base = medians["validate --decode full (1 core)"]
    print(f"{images:,} images ({added:,} copies of the demo's, {args.upscale}x upscaled), medians of {args.repeats}")
    print("| command | whole process s | images/s | vs validate |")
    print("|---|---:|---:|---:|")
    for name, median in medians.items():
        print(f"| {name} | {median:.2f} | {images / median:,.0f} | {base / median:.2f}x |")


if __name__ == "__main__":
    main()
