"""How many items a conversion has, read cheaply, and where the figure comes from: the paths the release's
records name (a record-driven conversion), else the matches of the registry's globs in the raw root (a kind
whose items are files, when the raw root holds them), else the registry's full count (subsets.yaml `counts`,
or the split counts of an npz file), so that `plan` counts every subset before anything is downloaded."""

from __future__ import annotations

import glob as globlib
import os
from dataclasses import dataclass
from pathlib import Path

from preprocess.registry import layout

# Where a count comes from (`plan`'s column `counted`); NOT_KNOWN: the registry's stand-in for a count no public
# source gives (a basis that starts "not known", USData's and M3D-Cap's)
RAW_ROOT, RECORDS, REGISTRY, NOT_KNOWN = "raw root", "release records", "registry", "not known"


@dataclass(frozen=True)
class Count:
    items: int
    counted: str  # RAW_ROOT, RECORDS, REGISTRY or NOT_KNOWN


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


def _recorded(registry, data_basedir: Path | None, subset, conversion) -> int:
    """The paths the release's records name for a record-driven conversion (0: none there)."""
    if data_basedir is None or "records" not in conversion.params:
        return 0
    from preprocess.release import releasenames

    named = releasenames.named_records(Path(data_basedir), registry, subset, conversion.params["records"])
    return len({path for record in named for path in record.paths})


def _in_raw_root(registry, raw_root: Path, subset, conversion, most: bool) -> int:
    """The most matches of one of the conversion's globs (`most`: all their matches, a count its items never
    exceed), for a kind whose items are the files they match (0: none there, or items no glob counts)."""
    kind = registry.kinds[conversion.kind]
    source = conversion.params.get("source") or subset.source_ids[0]
    if kind.item_unit(conversion.params, registry.source(source).variant) != "files":
        return 0
    found = [
        _matches(layout.raw_dir(raw_root, registry.source(source_id)), spec.glob)
        for source_id, spec in _specs(registry, subset, conversion)
        if spec.glob
    ]
    return (sum(found) if most else max(found)) if found else 0


def full_count(registry, subset, conversion) -> int:
    """The registry's items of a full download: the conversion's `counts` for its split, else the split
    counts of the npz files it reads (the registry's load check sees that one of them is there)."""
    if conversion.full_count is not None:
        return conversion.full_count["items"]
    splits = conversion.params.get("splits")
    npz = [spec.npz for _, spec in _specs(registry, subset, conversion) if spec.npz is not None]
    return sum(n for counts in npz for split, n in counts["counts"].items() if splits is None or split in splits)


def counted_items(registry, raw_root: Path, subset, conversion, *, data_basedir=None, most=False) -> Count:
    """Items of one conversion and where they were counted. The release's records first for a record-driven
    conversion: they name exactly what it builds, where the raw root holds more."""
    recorded = _recorded(registry, data_basedir, subset, conversion)
    if recorded:
        return Count(recorded, RECORDS)
    found = _in_raw_root(registry, raw_root, subset, conversion, most)
    if found:
        return Count(found, RAW_ROOT)
    known = conversion.full_count is None or not conversion.full_count["basis"].startswith(NOT_KNOWN)
    return Count(full_count(registry, subset, conversion), REGISTRY if known else NOT_KNOWN)


def count_items(registry, raw_root: Path, subset, conversion, *, data_basedir=None, most=False) -> int:
    return counted_items(registry, raw_root, subset, conversion, data_basedir=data_basedir, most=most).items
