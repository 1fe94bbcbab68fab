"""Before converting: per subset and split, how many items, output files and bytes, and how many core-hours and
jobs a build takes (`python -m preprocess plan`), from the per-item costs of preprocess/registry/costs.yaml
(measured by benchmarks/item_costs.py) and item counts. For a subset whose raw data is present (a presence
check: file lists and counts, no checksums) the items are those its conversions plan from the raw data, as
the build itself plans them; otherwise, and for the workflow's shard counts, they are read cheaply from the
registry and the raw root: the matches of each registry glob, the stored split counts of npz archives, the
stored item counts of single-file sources (full-size figures: what a complete download holds).

The workflow cuts a train conversion into as many shards as keep each job under JOB_SECONDS on one core."""

from __future__ import annotations

import functools
import glob as globlib
import math
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from preprocess.errors import PreprocessError, RegistryError
from preprocess.formats import tables
from preprocess.registry import layout, splits
from preprocess.registry.loader import REGISTRY_DIR, SafeLoader

COSTS = REGISTRY_DIR / "costs.yaml"
JOB_SECONDS = 3600  # no default train job runs longer than this on one core


@dataclass(frozen=True)
class Cost:
    seconds: float  # per item, one core
    files: float  # output files per item
    bytes: float  # output bytes per item
    items: int | None = None  # a stored item count, for sources whose items no glob counts (rows of a table)
    basis: str = ""  # what the figures were measured on
    measured: str = ""  # the date they were measured
    startup_seconds: float = 0.0  # a job's start-up (imports, planning) before its first item
    peak_rss_mb: dict | None = None  # the job's peak RSS (MB) at two job sizes: {items: MB}


@dataclass
class Estimate:
    subset: str
    conversion: str
    split: str
    items: int
    files: int
    bytes: int
    core_hours: float
    jobs: int
    buildable: bool = True  # its raw data is present (else the figures are the registry's, for after download)
    raw: str = ""  # why not buildable (raw missing, raw incomplete), or "" when it is


@functools.cache
def load_costs(path: Path = COSTS) -> dict[str, Cost]:
    document = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=SafeLoader) or {}
    return {key: Cost(**value) for key, value in (document.get("costs") or {}).items()}


def cost_key(registry, subset, conversion) -> str:
    """kind/dataset (or kind/recipe, or kind/flag: a MedMNIST dataset, whose labels set its files per item)
    when the conversion names one, else kind/source (an image folder's items are that source's files, of its
    own size); costs.yaml falls back to the kind's entry."""
    params = conversion.params
    source = params.get("source") or subset.source_ids[0]
    detail = params.get("dataset") or params.get("recipe") or params.get("flag") or source
    if isinstance(detail, dict):  # a recipe per source variant: the one the chosen variant takes
        detail = detail.get(registry.source(source).variant)
    return f"{conversion.kind}/{detail}"


def cost_of(registry, subset, conversion, costs: dict[str, Cost]) -> Cost:
    key = cost_key(registry, subset, conversion)
    for candidate in (key, conversion.kind):
        if candidate in costs:
            return costs[candidate]
    raise RegistryError(
        f"{subset.key}/{conversion.name}: no per-item cost for {key!r} in {COSTS}; "
        "run `python benchmarks/item_costs.py` to measure it"
    )


def _specs(registry, subset, conversion) -> list:
    """The file specs of the sources the conversion reads, of its split when it has any of that split."""
    needed = registry.files_needed(subset)
    if "source" in conversion.params:
        needed = {conversion.params["source"]: needed.get(conversion.params["source"], ())}
    pairs = [(source_id, spec) for source_id, specs in needed.items() for spec in specs]
    same = [pair for pair in pairs if pair[1].split == conversion.split]
    return same or pairs


def _matches(base: Path, pattern: str) -> int:
    escaped = globlib.escape(str(base))
    return sum(1 for _ in globlib.iglob(os.path.join(escaped, pattern), recursive=True))


def count_items(
    registry, raw_root: Path, subset, conversion, cost: Cost, data_basedir: Path | None = None, most: bool = False
) -> int:
    """Items of one conversion: for a record-driven one the paths the release's records name (when
    `data_basedir` holds them), else the stored count, else the split counts of its npz archives, else the most
    matches of one of its globs (`most`: all their matches, a count the items never exceed), else one per
    file it reads."""
    if data_basedir is not None and "records" in conversion.params:
        from preprocess.registry import releasenames

        named = releasenames.named_records(Path(data_basedir), registry, subset, conversion.params["records"])
        if named:
            return len({path for record in named for path in record.paths})
    if cost.items is not None:
        return cost.items
    specs = _specs(registry, subset, conversion)
    npz = [spec.npz for _, spec in specs if spec.npz is not None]
    if npz:
        splits = conversion.params.get("splits")
        return sum(n for counts in npz for split, n in counts["counts"].items() if splits is None or split in splits)
    globbed = [
        _matches(layout.raw_dir(raw_root, registry.source(source_id)), spec.glob)
        for source_id, spec in specs
        if spec.glob
    ]
    if not globbed:
        return max(1, len(specs))
    return sum(globbed) if most else max(globbed)


def shards_for(items: int, cost: Cost, limit: int = JOB_SECONDS) -> int:
    """Jobs that keep each under `limit` seconds on one core: ceil(items x seconds per item / limit)."""
    return max(1, math.ceil(items * cost.seconds / limit))


def _named(settings, subset, conversion) -> int | None:
    return settings.shards.get(f"{subset.key}/{conversion.name}", settings.shards.get(subset.key))


def _jobs(settings, subset, conversion, items: int, cost: Cost, ceiling: int = 0) -> int:
    """The config's count for the conversion or its subset, else the registry's; a train conversion gets at
    least as many as keep each job under an hour. Never more jobs than `ceiling` (the most items the raw
    root can hold for it, when counted): a job beyond them would have nothing to build (`shards: 100000` for
    two images makes two jobs)."""
    named = _named(settings, subset, conversion)
    if named is not None:
        jobs = named
    elif conversion.split != "train":
        jobs = conversion.shards
    else:
        jobs = max(conversion.shards, shards_for(items, cost))
    return min(jobs, ceiling) if ceiling > 0 else jobs


def _ceiling(registry, raw_root: Path, subset, conversion, cost: Cost, data_basedir: Path | None = None) -> int:
    return count_items(registry, raw_root, subset, conversion, cost, data_basedir, most=True)


def shard_count(settings, registry, subset, conversion, costs: dict[str, Cost] | None = None) -> int:
    """Jobs for one conversion, as the workflow cuts it (items are counted only when more than one job could
    be asked for: a train conversion, or a count above one in the config or the registry)."""
    named = _named(settings, subset, conversion)
    asked = named if named is not None else conversion.shards
    if asked <= 1 and conversion.split != "train":
        return asked
    cost = cost_of(registry, subset, conversion, costs or load_costs())
    items = count_items(registry, settings.raw_root, subset, conversion, cost, settings.data_basedir)
    ceiling = _ceiling(registry, settings.raw_root, subset, conversion, cost, settings.data_basedir)
    return _jobs(settings, subset, conversion, items, cost, ceiling)


def raw_plans(settings, registry) -> dict:
    """What a build would do with each selected subset (preprocess.checks.plan.SubsetPlan), from a presence check of
    its sources: file lists and counts, no checksums (`check` verifies those) and no download."""
    from dataclasses import replace

    from preprocess.checks.plan import plan_subset
    from preprocess.checks.rawcheck import check_all

    quick = replace(settings, verify_checksums=False, allow_download=False)
    chosen = registry.select(settings.subsets)
    checks = check_all(registry, quick, sorted({s for subset in chosen for s in subset.source_ids}), None)
    return {subset.key: plan_subset(registry, subset, checks, settings) for subset in chosen}


def planned_items(registry, settings, subset, conversion) -> int | None:
    """Items of one conversion as the build plans them from the raw data (None: its plan fails on this raw
    data, which the build would report)."""
    from preprocess.convert import ConversionContext, kind_module

    ctx = ConversionContext(registry, settings, subset, conversion, log=lambda text: None)
    try:
        return len(kind_module(registry.kinds[conversion.kind]).plan(ctx))
    except (PreprocessError, OSError, ValueError):  # bad raw data: the cheap count stands in
        return None


def estimate(settings, registry, conversions, costs: dict[str, Cost] | None = None, plans=None) -> list[Estimate]:
    """One estimate per (subset, conversion) pair of `conversions` that converts anything; with `plans` (of
    raw_plans) the items of a buildable subset's test conversions are counted by their own plans, and every
    estimate says whether its subset is buildable."""
    costs = costs or load_costs()
    found = []
    for subset, conversion in conversions:
        if registry.kinds[conversion.kind].module is None:
            continue
        cost = cost_of(registry, subset, conversion, costs)
        plan = (plans or {}).get(subset.key)
        buildable = plan is None or plan.action != "skip"
        # A train conversion's items are counted as the workflow counts them to cut its jobs (count_items).
        planned = plan is not None and buildable and conversion.split != "train"
        items = planned_items(registry, settings, subset, conversion) if planned else None
        if items is None:
            items = count_items(registry, settings.raw_root, subset, conversion, cost, settings.data_basedir)
        found.append(
            Estimate(
                subset.key,
                conversion.name,
                conversion.split,
                items,
                round(items * cost.files),
                round(items * cost.bytes),
                items * cost.seconds / 3600,
                _jobs(
                    settings,
                    subset,
                    conversion,
                    items,
                    cost,
                    _ceiling(registry, settings.raw_root, subset, conversion, cost, settings.data_basedir),
                ),
                buildable,
                "" if buildable else plan.reason,
            )
        )
    return found


def planned_conversions(settings, registry) -> list:
    """(subset, conversion) of every conversion the configured build runs: the selected subsets, the splits
    the config wants (preprocess/registry/splits.py)."""
    return [
        (subset, conversion)
        for subset in registry.select(settings.subsets)
        for conversion in splits.conversions(settings, subset)
    ]


def _size(count: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if count < 1000 or unit == "TB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return ""


def table(estimates: list[Estimate]) -> str:
    """Per subset and split (its conversions added up) with whether it is buildable, then the total of what
    will be built, and apart the full-size figures of what will not (until its raw data is there)."""
    rows: dict[tuple[str, str], list] = {}
    raw: dict[str, str] = {}
    for e in estimates:
        row = rows.setdefault((e.subset, e.split), [0, 0, 0, 0.0, 0])
        for index, value in enumerate((e.items, e.files, e.bytes, e.core_hours, e.jobs)):
            row[index] += value
        raw[e.subset] = "yes" if e.buildable else f"no: {e.raw}"
    body = [[subset, split, *_cells(row), raw[subset]] for (subset, split), row in sorted(rows.items())]
    built = [row for (subset, _), row in rows.items() if raw[subset] == "yes"]
    body.append(["total", "", *_cells([sum(row[i] for row in built) for i in range(5)]), "what will be built"])
    if len(built) < len(rows):
        skipped = [row for (subset, _), row in rows.items() if raw[subset] != "yes"]
        label = f"{len({s for (s, _) in rows if raw[s] != 'yes'})} subsets not built, once downloaded"
        body.append(["not built", "", *_cells([sum(row[i] for row in skipped) for i in range(5)]), label])
    headers = ["subset", "split", "items", "files", "size", "core-hours", "jobs", "buildable"]
    return tables.render(headers, body)


def _cells(row) -> list[str]:
    items, files, size, hours, jobs = row
    return [f"{items:,}", f"{files:,}", _size(size), f"{hours:,.2f}", f"{jobs:,}"]
