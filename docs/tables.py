"""The documentation's registry figures and tables, generated from the shipped registry.

A table sits between a `<!-- generated: NAME -->` line and an `<!-- end: NAME -->` line; a figure in the text
is written `<!-- count: NAME -->56<!-- /count -->` (the comments do not show on GitHub or the site). This
script rewrites them in README.md and every page under docs/; with --check it changes nothing and exits 1
naming each page whose marked places differ (a test runs it). The pages describe the benchmark as this
package ships it, so the registry is read without MEDHEB_EXTRA_REGISTRY's additions.

    .venv/bin/python docs/tables.py [--check]      (make docs-tables)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TABLE = re.compile(r"^<!-- generated: (?P<name>[\w-]+) -->\n(?P<body>.*?)^<!-- end: (?P=name) -->$", re.M | re.S)
COUNT = re.compile(r"<!-- count: (?P<name>[\w-]+) -->(?P<value>[^<]*)<!-- /count -->")


def facts() -> tuple[dict[str, str], dict[str, str]]:
    """Figures and tables of the shipped registry (and of the demo's declared left-out subsets)."""
    from preprocess.demo.folders import left_out
    from preprocess.registry.loader import load_registry
    from preprocess.reports.listing import list_rows, markdown_table, naming_table

    registry = load_registry(extras=False)
    tasks = [task for subset in registry.subsets for task in subset.tasks]
    counts = {
        "subsets": len(registry.subsets),
        "task-files": len(tasks),
        "image-task-files": sum(task.image_root is not None for task in tasks),
        "sources": len(registry.sources),
        "release-shipped": sum(subset.redistributed for subset in registry.subsets),
        # the demo after `make demo`: its image subsets but the left-out ones built, its text subsets the release's
        "demo-built": sum(not subset.is_text for subset in registry.subsets) - len(left_out()),
        "demo-from-release": sum(subset.is_text for subset in registry.subsets),
        "demo-not-built": len(left_out()),
    }
    tables = {
        "subsets": markdown_table(list_rows(registry)),
        "naming": naming_table(registry),
        "real-sizes": real_sizes_table(registry),
        "item-costs": item_costs_table(),
        **dict(zip(("budget", "stages"), budget_tables(), strict=True)),
    }
    return {name: str(value) for name, value in counts.items()}, tables


def real_sizes_table(registry) -> str:
    """Each source the real-size fakes write: its item and where the figure comes from (real_sizes.py)."""
    from preprocess.demo.real_sizes import SIZES

    lines = ["| source | real item written | where the figure comes from |", "|---|---|---|"]
    lines += [f"| {registry.sources[sid].name} | {size.item} | {size.basis} |" for sid, size in SIZES.items()]
    return "\n".join(lines)


def item_costs_table() -> str:
    """Each costs.yaml entry (benchmarks/item_costs.py): per item, start-up, output, and the peak at 1x and 4x."""
    import yaml

    from preprocess.sizing.costs import COSTS

    costs = yaml.safe_load(COSTS.read_text(encoding="utf-8"))["costs"]
    lines = [
        "| costs.yaml key | s/item | start-up s | bytes/item | files/item | items 1x: peak MB | items 4x: peak MB "
        "| 4x / 1x |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, cost in sorted(costs.items()):
        points = sorted((int(n), mb) for n, mb in cost["peak_rss_mb"].items())
        (small, low), (large, high) = points[0], points[-1]
        stand_in = " (stand-in)" if cost["basis"].startswith("the dearest") else ""
        lines.append(
            f"| `{key}`{stand_in} | {cost['seconds']:g} | {cost['startup_seconds']:g} | {cost['bytes']:,} "
            f"| {cost['files']:g} | {small}: {low} | {large}: {high} | {high / low:.2f} |"
        )
    return "\n".join(lines)


def budget_tables() -> tuple[str, str]:
    """The whole benchmark's budget at the registry's full counts (nothing downloaded, every split), as `medheb
    plan --cores 32 256 1024` prints it: per split group and core count, each wall next to its lower bound; then
    every stage's (raw checks, conversions, validation, fingerprints)."""
    import os
    import tempfile

    from preprocess.pipeline.sizing import estimate_build
    from preprocess.registry.config import settings_from_dict
    from preprocess.sizing import budget
    from preprocess.sizing.report import both_walls, size

    extra = os.environ.pop("MEDHEB_EXTRA_REGISTRY", None)  # the shipped registry alone
    try:
        with tempfile.TemporaryDirectory() as folder:
            raw, data = Path(folder, "raw"), Path(folder, "data")
            raw.mkdir()
            data.mkdir()
            values = {"raw_root": str(raw), "data_basedir": str(data), "subsets": "all", "splits": "all"}
            settings = settings_from_dict(values)
            found = estimate_build(settings, settings.registry())
    finally:
        if extra is not None:
            os.environ["MEDHEB_EXTRA_REGISTRY"] = extra
    lines = [
        "| splits | cores | jobs | core-hours | disk | largest job memory | longest job runtime (declared) "
        "| wall min, local (bound) | wall min, SLURM (bound) | whole build min, local / SLURM (bound) |",
        "|---|---:|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    budgets = budget.totals(found, [32, 256, 1024])
    for b in budgets:
        lines.append(
            f"| {b['splits']} | {b['cores']:,} | {b['jobs']:,} | {b['core_hours']:,.1f} | {size(b['bytes'])} "
            f"| {b['largest_mem_mb']:,} MB ({b['largest_mem_job']}) "
            f"| {b['longest_runtime']:,} min ({b['longest_runtime_job']}) "
            f"| {b['local'] * 60:,.1f} ({b['local_bound'] * 60:,.1f}) "
            f"| {b['slurm'] * 60:,.1f} ({b['slurm_bound'] * 60:,.1f}) "
            f"| {both_walls(b['build'])} |"
        )
    return "\n".join(lines), stage_lines(budgets)


def stage_lines(budgets: list[dict]) -> str:
    lines = [
        "| stage | splits | jobs | core-hours | longest job, min | wall min at 32 / 256 / 1,024 cores, SLURM (bound) |",
        "|---|---|---:|---:|---:|---|",
    ]
    for b in budgets:
        if b["cores"] != 32:
            continue
        at = {n["cores"]: {**n["stages"], "whole build": n["build"]} for n in budgets if n["splits"] == b["splits"]}
        for stage, one in at[32].items():
            walls = " / ".join(
                f"{at[n][stage]['slurm'] * 60:,.1f} ({at[n][stage]['slurm_bound'] * 60:,.1f})" for n in sorted(at)
            )
            lines.append(
                f"| {stage} | {b['splits']} | {one['jobs']:,} | {one['core_hours']:,.1f} "
                f"| {one['longest_job_seconds'] / 60:,.1f} | {walls} |"
            )
    return "\n".join(lines)


def fill(text: str, counts: dict[str, str], tables: dict[str, str]) -> str:
    """`text` with every marked figure and table written anew; an unknown name is an error."""

    def table(match: re.Match) -> str:
        name = match["name"]
        if name not in tables:
            raise ValueError(f"no generated table {name!r} (there are: {', '.join(tables)})")
        return f"<!-- generated: {name} -->\n{tables[name]}\n<!-- end: {name} -->"

    def count(match: re.Match) -> str:
        name = match["name"]
        if name not in counts:
            raise ValueError(f"no generated figure {name!r} (there are: {', '.join(counts)})")
        return f"<!-- count: {name} -->{counts[name]}<!-- /count -->"

    return COUNT.sub(count, TABLE.sub(table, text))


def pages(root: Path = REPO) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page differs")
    args = parser.parse_args(argv)
    counts, tables = facts()
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        filled = fill(text, counts, tables)
        if filled != text:
            stale.append(page.relative_to(REPO).as_posix())
            if not args.check:
                page.write_text(filled, encoding="utf-8")
    if args.check and stale:
        print(f"not what the registry gives (run make docs-tables): {', '.join(stale)}", file=sys.stderr)
        return 1
    for name in stale:
        print(f"rewrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
