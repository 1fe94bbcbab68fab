"""A conversion job's manifest: one row per file it wrote (path, kind, detail) and per bad item it skipped
(item, "problem", message). A TSV whose fields escape backslash, tab, newline and carriage return, so no raw
file name or message can break a row; written last and atomically (it is the job's done-marker)."""

from __future__ import annotations

from pathlib import Path

from preprocess.fsutil import atomic_write_text

HEADER = ("path", "kind", "detail")
_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_UNESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def _escape(text: str) -> str:
    return text.translate(_ESCAPES)  # in C: a manifest holds one row per file, millions for a big build


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out, characters = [], iter(text)
    for character in characters:
        out.append(_UNESCAPES.get(next(characters, ""), "") if character == "\\" else character)
    return "".join(out)


def write_manifest(path: Path, rows) -> None:
    atomic_write_text(path, manifest_text(rows))


def manifest_text(rows) -> str:
    """The header and one line per row. Joined plainly first: when the text holds no backslash or carriage
    return and exactly the tabs and newlines the joins put in, no field needs escaping (the common case, and
    one pass in C instead of one call per field)."""
    rows = list(rows)
    try:
        lines = ["\t".join(HEADER), *map("\t".join, rows)]
    except TypeError:  # a field that is not text yet
        rows = [tuple(map(str, row)) for row in rows]
        lines = ["\t".join(HEADER), *map("\t".join, rows)]
    text = "\n".join(lines) + "\n"
    fields = len(HEADER) + sum(map(len, rows))
    plain = "\\" not in text and "\r" not in text and text.count("\n") == len(rows) + 1
    if plain and text.count("\t") == fields - len(rows) - 1:
        return text
    lines = ["\t".join(HEADER)] + ["\t".join(_escape(str(field)) for field in row) for row in rows]
    return "\n".join(lines) + "\n"


def read_manifest(path: Path) -> list[tuple[str, str, str]]:
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    return [tuple(_unescape(field) for field in line.split("\t", 2)) for line in lines[1:] if line]
