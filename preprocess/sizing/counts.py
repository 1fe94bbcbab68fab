"""How many items a conversion has, read cheaply from the registry and the raw root: the paths the release's
records name, the stored count of a single-file source, the split counts of npz archives, the matches of the
registry's globs (full-size figures where the raw root is empty)."""

from __future__ import annotations

import glob as globlib
import os
from pathlib import Path

from preprocess.registry import layout
from preprocess.sizing.costs import Cost


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
