"""How many jobs a conversion is cut into, and what its largest job declares: the config's count for it or its
subset, else the registry's, raised until every job's predicted time stays under the build's target
(allocation.py: from the cores it runs on) and its memory under resources.MEM_TARGET_MB."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from preprocess.registry import splits
from preprocess.sizing import resources
from preprocess.sizing.costs import Cost, cost_of, load_costs
from preprocess.sizing.counts import count_items


def named(settings, subset, conversion) -> int | None:
    return settings.shards.get(f"{subset.key}/{conversion.name}", settings.shards.get(subset.key))


def cut(named: int | None, least: int, items: int, cost: Cost, threads: int, speedup: float, most: int, target=None):
    """Jobs of a conversion: `named` (the config's count) if given, else the fewest that keep each job under
    `target` seconds (default resources.JOB_SECONDS; and its memory under resources.MEM_TARGET_MB), never
    fewer than `least` (the registry's); never more than `most` (the most items it can have, counts.py): a
    job beyond them would have nothing to build (`shards: 100000` for two images makes two jobs)."""
    if named is not None:
        jobs = named
    else:
        target = resources.JOB_SECONDS if target is None else target
        jobs = max(least, resources.shards_for(items, cost, threads, speedup, target))
    return min(jobs, most) if most > 0 else jobs


def jobs_for(settings, registry, subset, conversion, items: int, cost: Cost, ceiling: int = 0, target=None) -> int:
    """The config's count for the conversion or its subset, else the registry's, raised to as many as keep
    each job under `target` seconds (cut)."""
    threads, speedup = resources.kind_threads(registry.kinds[conversion.kind])
    count = named(settings, subset, conversion)
    return cut(count, conversion.shards, items, cost, threads, speedup, ceiling, target)


def ceiling(registry, raw_root: Path, subset, conversion, *, data_basedir: Path | None = None) -> int:
    """The most items the conversion can have: all matches of its globs in the raw root, or its records', or
    the registry's count."""
    return count_items(registry, raw_root, subset, conversion, data_basedir=data_basedir, most=True)


@dataclass(frozen=True)
class Cutting:
    """What cutting a conversion into jobs takes, whatever the cores: its cost, its items counted cheaply (as
    the workflow counts them), the most it can have, the config's count and the registry's, its threads."""

    cost: Cost
    items: int
    most: int
    named: int | None
    least: int
    threads: int
    speedup: float
    subset: str = ""  # its subset's key: the validation and fingerprints that follow it (targets.py)

    @property
    def work(self) -> float:
        """Core-seconds of its items on its threads (start-ups left out: they follow the cut)."""
        return self.threads * self.items * self.cost.seconds / self.speedup

    def jobs(self, target: float | None) -> int:
        return cut(self.named, self.least, self.items, self.cost, self.threads, self.speedup, self.most, target)

    def job_list(self, target: float | None) -> list[tuple[float, int]]:
        """(predicted seconds, threads) of each of its jobs cut to `target` (shard i holds the items at positions
        i modulo the jobs)."""
        jobs = max(1, self.jobs(target))
        sizes = [self.items // jobs + (1 if shard < self.items % jobs else 0) for shard in range(jobs)]
        return [(resources.job_seconds(self.cost, n, self.speedup), self.threads) for n in sizes]


def cutting(settings, registry, subset, conversion, cost: Cost, items: int) -> Cutting:
    threads, speedup = resources.kind_threads(registry.kinds[conversion.kind])
    most = ceiling(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
    count = named(settings, subset, conversion)
    return Cutting(cost, items, most, count, conversion.shards, threads, speedup, subset.key)


def cuttings(settings, registry, costs: dict[str, Cost] | None = None) -> list[Cutting]:
    """Of every conversion the configured build runs (its selected subsets and splits, downloaded or not: the
    build the allocation is for), their items counted cheaply."""
    costs = costs or load_costs()
    found = []
    for subset in registry.select(settings.subsets):
        for conversion in splits.conversions(settings, subset):
            if registry.kinds[conversion.kind].module is None:
                continue
            cost = cost_of(registry, subset, conversion, costs)
            items = count_items(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
            found.append(cutting(settings, registry, subset, conversion, cost, items))
    return found


def shard_count(settings, registry, subset, conversion, costs: dict[str, Cost] | None = None, target=None) -> int:
    """Jobs for one conversion, as the workflow cuts it to `target` seconds (targets.build_targets; default an hour),
    its items counted cheaply in the raw root, unless the config names its count."""
    count = named(settings, subset, conversion)
    if count is not None and count <= 1:
        return count
    cost = cost_of(registry, subset, conversion, costs or load_costs())
    items = count_items(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
    most = ceiling(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
    return jobs_for(settings, registry, subset, conversion, items, cost, most, target)


def job_resources(settings, registry, subset, conversion, shards: int, attempt: int = 1, costs=None):
    """(threads, mem_mb, runtime minutes) of one convert job of a conversion cut into `shards`: its largest
    shard's items, counted cheaply from the raw root (or the registry's full counts), as the workflow cuts it."""
    cost = cost_of(registry, subset, conversion, costs or load_costs())
    items = count_items(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
    threads, speedup = resources.kind_threads(registry.kinds[conversion.kind])
    return resources.for_items(cost, resources.shard_items(items, shards), threads, speedup).at(attempt)


def job_seconds(settings, registry, subset, conversion, shards: int, costs=None) -> float:
    """Predicted seconds of the largest job of a conversion cut into `shards` (the workflow's job groups)."""
    cost = cost_of(registry, subset, conversion, costs or load_costs())
    items = count_items(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
    speedup = resources.kind_threads(registry.kinds[conversion.kind])[1]
    return resources.job_seconds(cost, resources.shard_items(items, shards), speedup)
