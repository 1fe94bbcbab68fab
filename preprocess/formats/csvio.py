"""The benchmark's split CSVs: a key column and a `split` column, read with utf-8-sig (some carry a BOM)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from preprocess.errors import RawDataError
from preprocess.formats.fsutil import open_regular


def _text(path: Path) -> str:
    try:
        with open_regular(path) as handle:  # a FIFO in its place would block a plain read forever
            data = handle.read()
    except OSError as exc:
        raise RawDataError(f"{path}: cannot read the split CSV ({exc}); copy it from the benchmark release") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RawDataError(
            f"{path} line {line}: not UTF-8 (byte {data[exc.start]:#04x}; saved as Latin-1?); "
            "copy the file from the benchmark release again, or re-save it as UTF-8"
        ) from None


def read_split_csv(path: Path, key_columns: tuple[str, ...]) -> dict[str, str]:
    """{key: split}, the key taken from the first of `key_columns` the file has. A row without the key or the
    split cell stops the read, naming its line."""
    try:
        reader = csv.reader(io.StringIO(_text(path), newline=""))
        header = next(reader, [])
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as exc:
        raise RawDataError(f"{path}: not a readable CSV ({exc}); copy it from the benchmark release") from None
    key = next((c for c in key_columns if c in header), None)
    if key is None or "split" not in header:
        raise RawDataError(f"{path}: expected columns {' or '.join(key_columns)} and split, got {header}")
    at, split_at = header.index(key), header.index("split")
    table = {}
    for line, row in rows:
        if not row:
            continue
        if len(row) <= max(at, split_at):
            raise RawDataError(
                f"{path} line {line}: {len(row)} cells, the header has {len(header)} ({key} and split needed); "
                "fix the row or copy the file from the benchmark release again"
            )
        table[row[at].strip()] = row[split_at].strip()
    return table
