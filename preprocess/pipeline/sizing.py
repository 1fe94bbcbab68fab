"""The sizing use case (`python -m preprocess plan`, the rehearsal): what a presence check of the raw data says
of each subset, the items its conversions plan from that data, and the estimates of preprocess/sizing from
them."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, replace

from preprocess.errors import PreprocessError
from preprocess.rawdata.rawcheck import check_all
from preprocess.readiness.buildable import decide_subset
from preprocess.sizing import budget, report, stages
from preprocess.sizing.costs import COSTS
from preprocess.sizing.estimate import at_target, estimate, planned_conversions


def raw_plans(settings, registry, results=None) -> dict:
    """What a build would do with each selected subset (preprocess.readiness.buildable.SubsetDecision), from a presence
    check of its sources: file lists and counts, no checksums (`check` verifies those) and no download. The
    results folder's manifests tell a subset we built from one the release ships."""
    quick = replace(settings, verify_checksums=False, allow_download=False)
    chosen = registry.select(settings.subsets)
    checks = check_all(registry, quick, sorted({s for subset in chosen for s in subset.source_ids}), None)
    return {subset.key: decide_subset(registry, subset, checks, settings, results) for subset in chosen}


def planned_items(registry, settings, subset, conversion) -> int | None:
    """Items of one conversion as the build plans them from the raw data (None: its plan fails on this raw
    data, which the build would report)."""
    from preprocess.convert import ConversionContext, kind_module  # the kinds' framework: only when planning

    ctx = ConversionContext(registry, settings, subset, conversion, log=lambda text: None)
    try:
        return len(kind_module(registry.kinds[conversion.kind]).plan(ctx))
    except (PreprocessError, OSError, ValueError):  # bad raw data: the cheap count stands in
        return None


def estimate_build(settings, registry, conversions=None, costs=None, results=None, cores=None) -> list:
    """The estimates of the configured build (or of `conversions`): buildable subsets counted by their own
    plans, the others at the registry's counts; its conversions cut for `cores` (the config's `cores:` wins;
    neither: jobs of up to an hour). The configured build's stages besides (the raw checks, the validation,
    the fingerprints: stages.py), not those of `conversions` alone."""
    plans = raw_plans(settings, registry, results)
    chosen = planned_conversions(settings, registry) if conversions is None else conversions
    found = estimate(
        settings,
        registry,
        chosen,
        costs,
        plans=plans,
        planned_items=lambda subset, conversion: planned_items(registry, settings, subset, conversion),
    )
    if settings.cores or cores:
        target = budget.target_for(found, cores, settings.cores).convert
        found = [at_target(e, target) for e in found]
    if conversions is None:
        found += stages.estimate_stages(settings, registry, found, plans)
    return found


def print_plan(settings, registry, results=None, cores=(32, 256, 1024), as_json: bool = False, started=None) -> None:
    """`plan`: the estimates of the configured build as a table with the wall time on each of `cores`, or
    as JSON; `started` (time.monotonic()) is when the command began, for the time it took."""
    found = estimate_build(settings, registry, results=results, cores=cores[0])
    if as_json:
        print(json.dumps([asdict(e) for e in found], indent=1))
        return
    print(report.table(found))
    print("\nthe whole selection, downloaded or not (docs/benchmarks.md: how jobs are sized and scheduled):")
    print(report.budget_table(budget.totals(found, cores)))
    print(
        f"\nestimated from {COSTS} in {time.monotonic() - (started or time.monotonic()):.2f} s; items (column "
        "counted) as the build plans them from the raw data, else as the release's records name them or the raw "
        'root holds them, else as the registry counts a full download (subsets.yaml counts); "not known": no '
        "public source counts the download, 1 item stands in (docs/guide/real-data.md)"
    )
