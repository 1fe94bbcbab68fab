"""The stages besides the conversions, in `plan` (issue 42, item 4), as the workflow runs them today:

- the raw checks: one job per source (check_source), a presence check of its files (the registry's file
  counts) and the MD5 of every download that lists one (the npz archives; their bytes taken as their pixels,
  counts x size^dims x channels of the chosen variant: an upper bound of the deflated archive);
- the validation: one job per subset (validate_subset), every path its task files name checked;
- the fingerprints: one job per subset on two threads (attest_subset), every image decoded and hashed.

Each priced from benchmarks/stage_costs.py (stage_costs.yaml): MD5 MB/s from the disk, seconds per file of a
presence check, and per output file at real sizes validate's and attest's seconds, interpolated by a file's
bytes (a conversion's bytes per file, costs.yaml). The validation and the fingerprints follow the conversions
of the split group they are budgeted for (budget.py)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from preprocess.formats import textparse
from preprocess.registry.loader import REGISTRY_DIR
from preprocess.sizing.estimate import Estimate
from preprocess.sizing.resources import RULES

STAGE_COSTS = REGISTRY_DIR / "stage_costs.yaml"
STARTUP_SECONDS = 0.5  # a stage job's start-up: the interpreter, the registry (as a conversion's, costs.yaml)
# attest on two workers ran 1.06x validate's speed where one ran 0.70x (docs/guide/fingerprints.md): 1.5x
ATTEST_THREADS, ATTEST_SPEEDUP = RULES["attest_subset"].threads, 1.5


@functools.cache
def load(path: Path = STAGE_COSTS) -> dict:
    return textparse.read_yaml(path)


def per_file(stage: str, bytes_per_file: float) -> float:
    """Seconds of `stage` (validate, attest) for one output file of that size, between the measured sizes."""
    sizes = load()["sizes"]
    return float(np.interp(bytes_per_file, [s["bytes"] for s in sizes], [s[f"{stage}_s"] for s in sizes]))


def md5_bytes(source) -> int:
    """Bytes of the downloads of `source` that list an MD5 (npz archives: their pixels at the chosen variant, an
    image size: MedMNIST's 28-224, MedSegBench's 128-512)."""
    side = int(source.variant) if (source.variant or "").isdigit() else 0
    total = 0
    for spec in source.files:
        if spec.md5 and spec.npz is not None and side:
            pixels = side ** spec.npz.get("dims", 2) * spec.npz.get("channels", 1)
            total += sum(spec.npz["counts"].values()) * pixels
    return total


def _job(stage: str, name: str, items: int, seconds: float, threads: int = 1) -> Estimate:
    declared = RULES[{"check": "check_source", "validate": "validate_subset", "attest": "attest_subset"}[stage]]
    return Estimate(
        name,
        stage,
        "test",
        items,
        0,
        0,
        threads * (STARTUP_SECONDS + seconds) / 3600,
        1,
        threads=threads,
        mem_mb=declared.mem_mb,
        runtime=declared.runtime,
        startup_seconds=STARTUP_SECONDS,
        item_seconds=seconds / max(1, items),
        counted="registry",
        stage=stage,
    )


def check_estimates(settings, registry) -> list[Estimate]:
    """One check job per source the selection reads."""
    costs = load()
    found = []
    for source_id in sorted({s for subset in registry.select(settings.subsets) for s in subset.source_ids}):
        source = registry.source(source_id)
        files = sum(max(1, spec.min_count or 1) for spec in source.files)
        hashed = md5_bytes(source) if settings.verifies_checksums(source_id) else 0
        seconds = files * costs["presence_seconds_per_file"] + hashed / 1e6 / costs["md5_mb_per_s"]
        found.append(_job("check", source_id, files, seconds))
    return found


def subset_estimates(conversions: list[Estimate]) -> list[Estimate]:
    """One validation and one fingerprint job per subset of the converted estimates: its files at their sizes."""
    files: dict[str, int] = {}
    seconds: dict[str, dict[str, float]] = {}
    for e in conversions:
        if e.stage != "convert" or not e.files:
            continue
        files[e.subset] = files.get(e.subset, 0) + e.files
        size = e.bytes / e.files
        for stage in ("validate", "attest"):
            spent = seconds.setdefault(e.subset, {}).setdefault(stage, 0.0)
            seconds[e.subset][stage] = spent + e.files * per_file(stage, size)
    found = []
    for subset in sorted(files):
        found.append(_job("validate", subset, files[subset], seconds[subset]["validate"]))
        attest = seconds[subset]["attest"] / ATTEST_SPEEDUP
        found.append(_job("attest", subset, files[subset], attest, ATTEST_THREADS))
    return found


def estimate_stages(settings, registry, conversions, plans=None) -> list[Estimate]:
    """The raw checks of the configured build (its validation and fingerprints follow the conversions of each
    split group: budget.py calls subset_estimates)."""
    return check_estimates(settings, registry)
