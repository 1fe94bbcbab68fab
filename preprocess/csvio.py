"""The benchmark's split CSVs: a key column and a `split` column, read with utf-8-sig (some carry a BOM)."""

from __future__ import annotations

import csv
from pathlib import Path

from preprocess.errors import RawDataError


def read_split_csv(path: Path, key_columns: tuple[str, ...]) -> dict[str, str]:
    """{key: split}, the key taken from the first of `key_columns` the file has."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise RawDataError(f"{path}: cannot read the split CSV ({exc}); copy it from the benchmark release") from None
    columns = list(rows[0]) if rows else []
    key = next((c for c in key_columns if c in columns), None)
    if key is None or "split" not in columns:
        raise RawDataError(f"{path}: expected columns {' or '.join(key_columns)} and split, got {columns}")
    return {row[key].strip(): row["split"].strip() for row in rows}
