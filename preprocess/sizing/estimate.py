"""Before converting: per subset and split, how many items, output files and bytes, and how many core-hours and
jobs a build takes (`python -m preprocess plan`), from the per-item costs (costs.py) and item counts
(counts.py). The application layer (preprocess/pipeline/sizing.py) hands in what a presence check of the raw
data says: which subsets are buildable, and the items their conversions plan from the raw data, as the build
itself plans them; the others are counted cheaply (counts.py: the release's records, the raw root, else the
registry's full count, so that nothing downloaded still plans the whole benchmark)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from preprocess.registry import splits
from preprocess.sizing import resources, shards
from preprocess.sizing.costs import Cost, cost_of, load_costs
from preprocess.sizing.counts import RAW_ROOT, counted_items
from preprocess.sizing.shards import Cutting


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
    counted: str = ""  # where its items were counted: raw root, release records or registry (counts.py)
    stage: str = "convert"  # or check, validate, attest (stages.py)
    cutting: Cutting | None = field(default=None, repr=False)  # to cut it again for other cores (at_target)

    def job_seconds(self) -> list[float]:
        """Predicted seconds of each of its jobs (shard i holds the items at positions i modulo jobs)."""
        jobs = max(1, self.jobs)
        larger = self.items % jobs
        sizes = [self.items // jobs + (1 if shard < larger else 0) for shard in range(jobs)]
        return [self.startup_seconds + n * self.item_seconds for n in sizes]


def at_target(e: Estimate, target: float | None) -> Estimate:
    """The estimate of a conversion cut into jobs of at most `target` seconds (None: an hour; a stage's
    estimate, which has no cutting, as it is): its jobs, core-hours and the declared resources of its largest."""
    c = e.cutting
    if c is None:
        return e
    jobs = c.jobs(target)
    largest = resources.for_items(c.cost, resources.shard_items(c.items, jobs), c.threads, c.speedup)  # declared
    hours = c.threads * (jobs * c.cost.startup_seconds + e.items * c.cost.seconds / c.speedup) / 3600
    return replace(e, jobs=jobs, core_hours=hours, mem_mb=largest.mem_mb, runtime=largest.runtime)


def estimate(
    settings, registry, conversions, costs: dict[str, Cost] | None = None, plans=None, planned_items=None, target=None
) -> list[Estimate]:
    """One estimate per (subset, conversion) pair of `conversions` that converts anything, cut into jobs of at
    most `target` seconds (shards.build_target; None: an hour); with `plans` (what a build would do with each
    subset, by key) every estimate says whether its subset is buildable, and with `planned_items(subset,
    conversion)` (None: not known) the items of a buildable subset's test conversions are those its own plan
    counts."""
    costs = costs or load_costs()
    found = []
    for subset, conversion in conversions:
        if registry.kinds[conversion.kind].module is None:
            continue
        cost = cost_of(registry, subset, conversion, costs)
        plan = (plans or {}).get(subset.key)
        buildable = plan is None or plan.action not in ("skip", "release")  # a subset from the release: not built
        # A train conversion's items are counted as the workflow counts them to cut its jobs (count_items).
        planned = planned_items is not None and plan is not None and buildable and conversion.split != "train"
        cheap = counted_items(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
        items = planned_items(subset, conversion) if planned else None
        where = RAW_ROOT if items is not None else cheap.counted  # its own plan read the raw data
        if items is None:
            items = cheap.items
        threads, speedup = resources.kind_threads(registry.kinds[conversion.kind])
        cutting = shards.cutting(settings, registry, subset, conversion, cost, cheap.items)
        blank = Estimate(subset.key, conversion.name, conversion.split, items, round(items * cost.files),
                         round(items * cost.bytes), 0.0, 0, buildable, "" if buildable else plan.reason, threads,
                         startup_seconds=cost.startup_seconds, item_seconds=cost.seconds / speedup, counted=where,
                         cutting=cutting)  # fmt: skip
        found.append(at_target(blank, target))
    return found


def planned_conversions(settings, registry) -> list:
    """(subset, conversion) of every conversion the configured build runs: the selected subsets, the splits
    the config wants (preprocess/registry/splits.py)."""
    return [
        (subset, conversion)
        for subset in registry.select(settings.subsets)
        for conversion in splits.conversions(settings, subset)
    ]
