"""The measured per-item costs of every conversion (preprocess/registry/costs.yaml, written by
benchmarks/item_costs.py on the real-size fakes) and which entry prices which conversion."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from preprocess.errors import RegistryError
from preprocess.formats import textparse
from preprocess.registry.loader import REGISTRY_DIR

COSTS = REGISTRY_DIR / "costs.yaml"


@dataclass(frozen=True)
class Cost:
    seconds: float  # per item, one core
    files: float  # output files per item
    bytes: float  # output bytes per item
    basis: str = ""  # what the figures were measured on
    measured: str = ""  # the date they were measured
    startup_seconds: float = 0.0  # a job's start-up (imports, planning) before its first item
    peak_rss_mb: dict | None = None  # the job's peak RSS (MB) at two job sizes: {items: MB}


@functools.cache
def load_costs(path: Path = COSTS) -> dict[str, Cost]:
    document = textparse.read_yaml(path) or {}
    return {key: Cost(**value) for key, value in (document.get("costs") or {}).items()}


VARIANT = "@"  # a key's variant part: npz_unpack_2d/bloodmnist@28, the kind's own entry npz_unpack_2d@28


def cost_key(registry, subset, conversion) -> str:
    """kind/flag (a MedMNIST or MedSegBench dataset: its channels set the bytes, its labels the files per item),
    or kind/dataset, or kind/recipe, when the conversion names one, else kind/source (an image folder's items
    are that source's files, of its own size); then @variant when the source it reads has variants (MedMNIST's
    and MedSegBench's image size: another size costs another time and disk), unless its recipe already follows
    the variant. costs.yaml falls back to the kind's entry of the same variant (fallback_key)."""
    params = conversion.params
    source = registry.source(params.get("source") or subset.source_ids[0])
    detail = params.get("flag") or params.get("dataset") or params.get("recipe") or source.id
    if isinstance(detail, dict):  # a recipe per source variant: the one the chosen variant takes
        return f"{conversion.kind}/{detail.get(source.variant)}"
    return f"{conversion.kind}/{detail}" + (f"{VARIANT}{source.variant}" if source.variant is not None else "")


def split_key(key: str) -> tuple[str, str | None]:
    """(the key without its variant, the variant or None): npz_unpack_2d/bloodmnist@28 -> (.../bloodmnist, 28)."""
    base, _, variant = key.partition(VARIANT)
    return base, variant or None


def fallback_key(key: str) -> str:
    """The kind's entry that prices a conversion without its own, at the same variant: npz_unpack_2d@28."""
    base, variant = split_key(key)
    return base.split("/")[0] + (f"{VARIANT}{variant}" if variant else "")


def cost_of(registry, subset, conversion, costs: dict[str, Cost]) -> Cost:
    key = cost_key(registry, subset, conversion)
    for candidate in (key, fallback_key(key)):
        if candidate in costs:
            return costs[candidate]
    raise RegistryError(
        f"{subset.key}/{conversion.name}: no per-item cost for {key!r} (nor {fallback_key(key)!r}) in {COSTS}; "
        "run `python benchmarks/item_costs.py` to measure it"
    )
