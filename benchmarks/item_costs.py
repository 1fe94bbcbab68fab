"""Measure each conversion kind's cost per item and rewrite preprocess/registry/costs.yaml (what
`python -m preprocess plan` multiplies by the item counts).

Every conversion of the embedded demo is built once, in this process, on a fresh demo copy: seconds per item
(wall time of the job, its plan included, over its items), output files and bytes per item (its manifest).
Demo inputs are tiny (32 px images, 16-slice volumes), so their seconds are a floor; with --full-size the
CT-RATE volume kind is measured on one 512x512x300 int16 synthetic volume (benchmarks/volume_path.py's
phantom), the size of a real CT-RATE reconstruction, and that figure is used for every volume dataset whose
real volumes are of that order (CT-RATE, RadGenome-ChestCT). Stored item counts (`items`, for sources whose
items no glob counts) are kept from the file as it was.

    python benchmarks/item_costs.py [--full-size] [--out preprocess/registry/costs.yaml]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from preprocess.convert import ConversionContext, kind_module  # noqa: E402
from preprocess.demo import write_demo  # noqa: E402
from preprocess.errors import PreprocessError  # noqa: E402
from preprocess.formats.manifest import read_manifest  # noqa: E402
from preprocess.pipeline.estimate import COSTS, cost_key  # noqa: E402
from preprocess.pipeline.steps import Build  # noqa: E402
from preprocess.registry.config import settings_from_dict  # noqa: E402

FULL_SIZE_KEYS = ("volume_slices/ct_rate", "volume_slices/radgenome_chestct")


def measure(build: Build, subset, conversion, results: Path) -> tuple[float, int, int, int]:
    """(seconds, items, files, bytes) of one conversion built once."""
    ctx = ConversionContext(build.registry, build.settings, subset, conversion, log=lambda text: None)
    with contextlib.redirect_stdout(io.StringIO()):
        items = len(kind_module(build.registry.kinds[conversion.kind]).plan(ctx))
        started = time.perf_counter()
        build.convert(subset=subset.key, conversion=conversion.name)
        seconds = time.perf_counter() - started
    manifest = next(results.rglob(f"{conversion.name}.0-of-1.tsv"))
    rows = [row for row in read_manifest(manifest) if row[1] in ("file", "symlink")]
    size = sum(int(detail.split(":", 1)[0]) for _, kind, detail in rows if kind == "file" and ":" in detail)
    manifest.unlink()
    return seconds, items, len(rows), size


def demo_costs(folder: Path) -> dict[str, dict]:
    demo = write_demo(folder / "demo")
    results = folder / "results"
    values = {
        "raw_root": str(demo / "raw"),
        "data_basedir": str(demo / "DATA_BASEDIR"),
        "registry_overrides": str(demo / "registry-overrides.yaml"),
        "subsets": "all",
    }
    build = Build(settings_from_dict(values), results=results)
    totals: dict[str, list] = defaultdict(lambda: [0.0, 0, 0, 0])
    for subset in build.registry.subsets:
        for conversion in subset.conversions:
            if build.registry.kinds[conversion.kind].module is None:
                continue
            try:
                measured = measure(build, subset, conversion, results)
            except PreprocessError:  # a subset the demo has no raw data for
                print(f"{subset.key}/{conversion.name}: not in the demo, not measured", flush=True)
                continue
            key = cost_key(build.registry, subset, conversion)
            for index, value in enumerate(measured):
                totals[key][index] += value
            print(f"{subset.key}/{conversion.name} ({key}): {measured[0]:.3f} s, {measured[1]} items", flush=True)
    return {key: _per_item(*values, "demo") for key, values in totals.items()}


def full_size_ct(folder: Path) -> dict:
    from volume_path import make_raw

    root = folder / "ct"
    make_raw(root, 1)
    values = yaml.safe_load((root / "config.yaml").read_text())
    (root / "DATA").mkdir(exist_ok=True)
    build = Build(settings_from_dict(values), results=root / "results")
    subset = build.registry.subset("3D_Task/CT_RATE")
    measured = measure(build, subset, subset.conversions[0], root / "results")
    print(f"full-size CT-RATE volume: {measured[0]:.2f} s", flush=True)
    return _per_item(*measured, "one 512x512x300 int16 synthetic volume (slices + DRR)")


def _per_item(seconds: float, items: int, files: int, size: int, basis: str) -> dict:
    items = max(items, 1)
    return {
        "seconds": round(seconds / items, 4),
        "files": round(files / items, 2),
        "bytes": round(size / items),
        "basis": basis,
    }


def write(out: Path, measured: dict[str, dict]) -> None:
    old = (yaml.safe_load(out.read_text()) or {}).get("costs", {}) if out.exists() else {}
    merged = {}
    for key in sorted(set(old) | set(measured)):
        entry = {**old.get(key, {}), **measured.get(key, {})}
        merged[key] = entry
    header = (
        "# Per-item costs of each conversion kind (kind/dataset), one core: seconds, output files and bytes per\n"
        "# item, and what they were measured on. Rewritten by benchmarks/item_costs.py; `items` is a stored item\n"
        "# count for sources whose items no registry glob counts (rows of a table), kept across rewrites.\n"
    )
    out.write_text(header + yaml.safe_dump({"costs": merged}, sort_keys=True, width=120))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full-size", action="store_true", help="also time one full-size CT volume")
    parser.add_argument("--out", type=Path, default=COSTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        measured = demo_costs(Path(folder))
        if args.full_size:
            ct = full_size_ct(Path(folder))
            for key in FULL_SIZE_KEYS:
                measured[key] = dict(ct)
    write(args.out, measured)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
