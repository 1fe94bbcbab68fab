"""Before converting: per subset and split, how many items, output files and bytes, and how many core-hours and
jobs a build takes (`python -m preprocess plan`), from the per-item costs of preprocess/registry/costs.yaml
(measured by benchmarks/item_costs.py) and item counts. For a subset whose raw data is present (a presence
check: file lists and counts, no checksums) the items are those its conversions plan from the raw data, as
the build itself plans them; otherwise, and for the workflow's shard counts, they are read cheaply from the
registry and the raw root: the matches of each registry glob, the stored split counts of npz archives, the
stored item counts of single-file sources (full-size figures: what a complete download holds).

The workflow cuts every conversion, test and train, into as many shards as keep each job under
resources.JOB_SECONDS (preprocess/pipeline/resources.py, which also sizes each job's memory and runtime)."""

from __future__ import annotations

import functools
import glob as globlib
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from preprocess.errors import PreprocessError, RegistryError
from preprocess.formats import tables
from preprocess.pipeline import resources
from preprocess.registry import layout, splits
from preprocess.registry.loader import REGISTRY_DIR, SafeLoader

COSTS = REGISTRY_DIR / "costs.yaml"


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
    core_hours: float  # cores held x predicted hours, over all its jobs (start-ups included)
    jobs: int
    buildable: bool = True  # its raw data is present (else the figures are the registry's, for after download)
    raw: str = ""  # why not buildable (raw missing, raw incomplete), or "" when it is
    threads: int = 1  # of each job
    mem_mb: int = 0  # declared by its largest job (first attempt)
    runtime: int = 0  # minutes, declared by its largest job (first attempt)
    startup_seconds: float = 0.0  # predicted: a job's start-up ...
    item_seconds: float = 0.0  # ... and each item on the job's threads

    def job_seconds(self) -> list[float]:
        """Predicted seconds of each of its jobs (shard i holds the items at positions i modulo jobs)."""
        jobs = max(1, self.jobs)
        larger = self.items % jobs
        sizes = [self.items // jobs + (1 if shard < larger else 0) for shard in range(jobs)]
        return [self.startup_seconds + n * self.item_seconds for n in sizes]


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


def _named(settings, subset, conversion) -> int | None:
    return settings.shards.get(f"{subset.key}/{conversion.name}", settings.shards.get(subset.key))


def _jobs(settings, registry, subset, conversion, items: int, cost: Cost, ceiling: int = 0) -> int:
    """The config's count for the conversion or its subset, else the registry's, raised to as many as keep
    each job under resources.JOB_SECONDS (and its memory under resources.MEM_TARGET_MB). Never more jobs than
    `ceiling` (the most items the raw root can hold for it, when counted): a job beyond them would have
    nothing to build (`shards: 100000` for two images makes two jobs)."""
    named = _named(settings, subset, conversion)
    if named is not None:
        jobs = named
    else:
        threads, speedup = resources.kind_threads(registry.kinds[conversion.kind])
        jobs = max(conversion.shards, resources.shards_for(items, cost, threads, speedup))
    return min(jobs, ceiling) if ceiling > 0 else jobs


def _ceiling(registry, raw_root: Path, subset, conversion, cost: Cost, data_basedir: Path | None = None) -> int:
    return count_items(registry, raw_root, subset, conversion, cost, data_basedir, most=True)


def shard_count(settings, registry, subset, conversion, costs: dict[str, Cost] | None = None) -> int:
    """Jobs for one conversion, as the workflow cuts it (its items counted cheaply in the raw root, unless the
    config names its count)."""
    named = _named(settings, subset, conversion)
    if named is not None and named <= 1:
        return named
    cost = cost_of(registry, subset, conversion, costs or load_costs())
    items = count_items(registry, settings.raw_root, subset, conversion, cost, settings.data_basedir)
    ceiling = _ceiling(registry, settings.raw_root, subset, conversion, cost, settings.data_basedir)
    return _jobs(settings, registry, subset, conversion, items, cost, ceiling)


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
        counted = count_items(registry, settings.raw_root, subset, conversion, cost, settings.data_basedir)
        items = planned_items(registry, settings, subset, conversion) if planned else None
        if items is None:
            items = counted
        jobs = _jobs(  # cut from the cheap count, as the workflow cuts it
            settings,
            registry,
            subset,
            conversion,
            counted,
            cost,
            _ceiling(registry, settings.raw_root, subset, conversion, cost, settings.data_basedir),
        )
        threads, speedup = resources.kind_threads(registry.kinds[conversion.kind])
        largest = resources.for_items(cost, resources.shard_items(counted, jobs), threads, speedup)  # as declared
        found.append(
            Estimate(
                subset.key,
                conversion.name,
                conversion.split,
                items,
                round(items * cost.files),
                round(items * cost.bytes),
                threads * (jobs * cost.startup_seconds + items * cost.seconds / speedup) / 3600,
                jobs,
                buildable,
                "" if buildable else plan.reason,
                threads,
                largest.mem_mb,
                largest.runtime,
                cost.startup_seconds,
                cost.seconds / speedup,
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


def size(count: float) -> str:
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
    items, files, written, hours, jobs = row
    return [f"{items:,}", f"{files:,}", size(written), f"{hours:,.2f}", f"{jobs:,}"]
