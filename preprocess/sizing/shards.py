"""How many jobs a conversion is cut into, and what its largest job declares: the config's count for it or its
subset, else the registry's, raised until every job's predicted time stays under resources.JOB_SECONDS and its
memory under resources.MEM_TARGET_MB."""

from __future__ import annotations

from pathlib import Path

from preprocess.sizing import resources
from preprocess.sizing.costs import Cost, cost_of, load_costs
from preprocess.sizing.counts import count_items


def _named(settings, subset, conversion) -> int | None:
    return settings.shards.get(f"{subset.key}/{conversion.name}", settings.shards.get(subset.key))


def jobs_for(settings, registry, subset, conversion, items: int, cost: Cost, ceiling: int = 0) -> int:
    """The config's count for the conversion or its subset, else the registry's, raised to as many as keep
    each job under resources.JOB_SECONDS (and its memory under resources.MEM_TARGET_MB). Never more jobs than
    `ceiling` (the most items it can have, counts.py): a job beyond them would have nothing to build
    (`shards: 100000` for two images makes two jobs)."""
    named = _named(settings, subset, conversion)
    if named is not None:
        jobs = named
    else:
        threads, speedup = resources.kind_threads(registry.kinds[conversion.kind])
        jobs = max(conversion.shards, resources.shards_for(items, cost, threads, speedup))
    return min(jobs, ceiling) if ceiling > 0 else jobs


def ceiling(registry, raw_root: Path, subset, conversion, *, data_basedir: Path | None = None) -> int:
    """The most items the conversion can have: all matches of its globs in the raw root, or its records', or
    the registry's count."""
    return count_items(registry, raw_root, subset, conversion, data_basedir=data_basedir, most=True)


def shard_count(settings, registry, subset, conversion, costs: dict[str, Cost] | None = None) -> int:
    """Jobs for one conversion, as the workflow cuts it (its items counted cheaply in the raw root, unless the
    config names its count)."""
    named = _named(settings, subset, conversion)
    if named is not None and named <= 1:
        return named
    cost = cost_of(registry, subset, conversion, costs or load_costs())
    items = count_items(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
    most = ceiling(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
    return jobs_for(settings, registry, subset, conversion, items, cost, most)


def job_resources(settings, registry, subset, conversion, shards: int, attempt: int = 1, costs=None):
    """(threads, mem_mb, runtime minutes) of one convert job of a conversion cut into `shards`: its largest
    shard's items, counted cheaply from the raw root (or the registry's full counts), as the workflow cuts it."""
    cost = cost_of(registry, subset, conversion, costs or load_costs())
    items = count_items(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
    threads, speedup = resources.kind_threads(registry.kinds[conversion.kind])
    return resources.for_items(cost, resources.shard_items(items, shards), threads, speedup).at(attempt)
