"""Hugging Face parquet shards by name: `<split>-KKKKK-of-NNNNN.parquet`, with a hash before the suffix in the
Hub's older uploads (`Test-00000-of-00001-91a106d1a22c7cc9.parquet`). Where rows are numbered across the files
of a split (ROCO-QA's one counter), the files must be exactly one set: every shard of 0..N-1 once. A set with a
shard missing would shift every later number, and two sets (an old single file beside a new 26-shard upload)
would count rows twice; both are refused, naming the files."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

SHARD = re.compile(r"(?P<stem>.+)-(?P<index>\d{5})-of-(?P<total>\d{5})(?:-[0-9a-f]+)?\.parquet")


def set_problem(paths: list[str]) -> str | None:
    """What keeps `paths` (parquet files, as shown) from being one complete set of shards, or None."""
    sets: dict[tuple[str, int], dict[int, list[str]]] = {}
    for path in sorted(paths):
        match = SHARD.fullmatch(PurePosixPath(path).name)
        if match is None:
            return f"{path} is not named as a shard (<split>-KKKKK-of-NNNNN[-<hash>].parquet); move it away"
        key = (match["stem"], int(match["total"]))
        sets.setdefault(key, {}).setdefault(int(match["index"]), []).append(path)
    if not sets:
        return None
    if len(sets) > 1:
        shown = " and ".join(f"{len(found)} of {stem}-*-of-{total:05d}" for (stem, total), found in sets.items())
        return f"two sets of shards ({shown}): keep one set (every row of them is counted)"
    ((stem, total), found) = next(iter(sets.items()))
    twice = sorted(p for copies in found.values() if len(copies) > 1 for p in copies)
    if twice:
        return f"one shard in several files ({', '.join(twice)}): keep one of them"
    absent = [f"{stem}-{k:05d}-of-{total:05d}" for k in range(total) if k not in found]
    if absent:
        more = f" and {len(absent) - 3} more" if len(absent) > 3 else ""
        return f"{len(found)} of {total} shards, without {', '.join(absent[:3])}{more}: download the missing ones"
    return None
