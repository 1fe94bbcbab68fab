"""A conversion job's manifest: one row per file it wrote (path, kind, detail) and per bad item it skipped
(item, "problem", message). Tab-separated values in the csv module's `excel-tab` dialect: a field holding a
tab, a quote or a line break is quoted, so no raw file name or message can break a row, and any TSV reader
(csv, pandas, R) reads it back. Written last and atomically: it is the job's done-marker."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from preprocess.formats.fsutil import atomic_write_text

HEADER = ("path", "kind", "detail")


def write_manifest(path: Path, rows) -> None:
    atomic_write_text(path, manifest_text(rows))


def manifest_text(rows) -> str:
    """The header and one record per row; a field that is not text yet is written as its text."""
    rows = list(rows)
    text = io.StringIO()
    writer = csv.writer(text, dialect="excel-tab", lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(rows)
    if "\r" not in text.getvalue():
        return text.getvalue()
    # The dialect quotes a field with a line feed but not one with a lone carriage return, which a reader
    # takes for a line end: the rows that hold one are written with every field quoted.
    text = io.StringIO()
    writer = csv.writer(text, dialect="excel-tab", lineterminator="\n")
    quoted = csv.writer(text, dialect="excel-tab", lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(HEADER)
    for row in rows:
        (quoted if any("\r" in str(field) for field in row) else writer).writerow(row)
    return text.getvalue()


def read_manifest(path: Path) -> list[tuple[str, str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        records = csv.reader(handle, dialect="excel-tab")
        next(records, None)  # the header
        return [tuple(record) for record in records]
