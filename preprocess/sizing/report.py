"""The text tables of `python -m preprocess plan`: per subset and split, then the whole build's budget."""

from __future__ import annotations

from preprocess.formats import tables
from preprocess.release.holdings import FROM_RELEASE


def size(count: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if count < 1000 or unit == "TB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return ""


def table(estimates: list) -> str:
    """Per subset and split (its conversions added up) with where its items were counted and whether it is
    buildable, then the total of what will be built, and apart the full-size figures of what will not (until
    its raw data is there)."""
    rows: dict[tuple[str, str], list] = {}
    counted: dict[tuple[str, str], set] = {}
    raw: dict[str, str] = {}
    for e in estimates:
        row = rows.setdefault((e.subset, e.split), [0, 0, 0, 0.0, 0])
        for index, value in enumerate((e.items, e.files, e.bytes, e.core_hours, e.jobs)):
            row[index] += value
        counted.setdefault((e.subset, e.split), set()).add(e.counted)
        raw[e.subset] = "yes" if e.buildable else f"no: {e.raw}"
    body = [
        [subset, split, *_cells(row), " + ".join(sorted(counted[subset, split])), raw[subset]]
        for (subset, split), row in sorted(rows.items())
    ]
    built = [row for (subset, _), row in rows.items() if raw[subset] == "yes"]
    body.append(["total", "", *_cells([sum(row[i] for row in built) for i in range(5)]), "", "what will be built"])
    # apart: the subsets taken from the release (rebuilt with build: all only), then those that need a download
    released = {s for (s, _) in rows if raw[s].startswith(f"no: {FROM_RELEASE}")}
    waiting = {s for (s, _) in rows if raw[s] != "yes"} - released
    for name, chosen, label in (
        (FROM_RELEASE, released, f"{len(released)} subsets validated as the release has them, not rebuilt"),
        ("not built", waiting, f"{len(waiting)} subsets not built, once downloaded"),
    ):
        if chosen:
            skipped = [row for (subset, _), row in rows.items() if subset in chosen]
            body.append([name, "", *_cells([sum(row[i] for row in skipped) for i in range(5)]), "", label])
    headers = ["subset", "split", "items", "files", "size", "core-hours", "jobs", "counted", "buildable"]
    return tables.render(headers, body)


def _cells(row) -> list[str]:
    items, files, written, hours, jobs = row
    return [f"{items:,}", f"{files:,}", size(written), f"{hours:,.2f}", f"{jobs:,}"]


def budget_table(budgets: list[dict]) -> str:
    """The budgets as a table: one row per split group and core count, the conversions' walls (minutes) next to
    their lower bounds, then the whole build's (every stage, as the workflow overlaps them)."""
    headers = ["splits", "cores", "jobs", "core-hours", "disk", "largest job memory", "longest job runtime"]
    headers += ["wall min local (bound)", "wall min SLURM (bound)", "whole build min local / SLURM (bound)"]
    body = [
        [
            b["splits"],
            f"{b['cores']:,}",
            f"{b['jobs']:,}",
            f"{b['core_hours']:,.1f}",
            size(b["bytes"]),
            f"{b['largest_mem_mb']:,} MB ({b['largest_mem_job']})",
            f"{b['longest_runtime']:,} min ({b['longest_runtime_job']})",
            f"{b['local'] * 60:,.1f} ({b['local_bound'] * 60:,.1f})",
            f"{b['slurm'] * 60:,.1f} ({b['slurm_bound'] * 60:,.1f})",
            both_walls(b["build"]),
        ]
        for b in budgets
    ]
    return tables.render(headers, body) + "\n\n" + stage_table(budgets)


def both_walls(walls: dict) -> str:
    """'local / SLURM (SLURM's bound)', in minutes."""
    return f"{walls['local'] * 60:,.1f} / {walls['slurm'] * 60:,.1f} ({walls['slurm_bound'] * 60:,.1f})"


def stage_table(budgets: list[dict]) -> str:
    """Every stage of the build (raw checks, conversions, validation, fingerprints) per split group: its jobs,
    core-hours and longest job, and its wall on each core count (local / SLURM, SLURM's bound) as if it ran
    alone, then the whole build's, its stages overlapping as the workflow runs them (buildwall.py)."""
    cores = sorted({b["cores"] for b in budgets})
    headers = ["stage", "splits", "jobs", "core-hours", "longest job min"]
    headers += [f"wall min, {n:,} cores: local / SLURM (bound)" for n in cores]
    body = []
    for splits in dict.fromkeys(b["splits"] for b in budgets):
        at = {b["cores"]: {**b["stages"], "whole build": b["build"]} for b in budgets if b["splits"] == splits}
        for stage, one in at[cores[0]].items():
            body.append(
                [
                    stage,
                    splits,
                    f"{one['jobs']:,}",
                    f"{one['core_hours']:,.1f}",
                    f"{one['longest_job_seconds'] / 60:,.1f}",
                    *[both_walls(at[n][stage]) for n in cores],
                ]
            )
    title = "every stage alone (preprocess/sizing/stages.py), then the whole build as the workflow overlaps them"
    return f"{title} (preprocess/sizing/buildwall.py):\n" + tables.render(headers, body)
