"""The one reader of the release's own files: its task JSONs (a JSON list of records) and its Train_Data JSONLs
(one record a line). validate, attest, check, plan, status and convert all read them here, so a file that
exists but cannot be read is named the same way by every command, with what is wrong with it: not a regular
file (a FIFO would block a plain read forever), a link to nothing, a link out of DATA_BASEDIR, not UTF-8, not
JSON, nested too deep for Python's parser, a number too long for it, or not a list of records
(formats/textparse.py reads and parses them, as it does every JSON and YAML file).

A release file is read only where it lies inside DATA_BASEDIR, links resolved: a task JSON that is a symbolic
link to a system file (or under a folder linked out) is not the release's. A hard link cannot be told from the
file itself: it is read (with the kernel's protected_hardlinks, whoever made it could read the file already).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from preprocess.formats import textparse
from preprocess.formats.fsutil import is_within
from preprocess.formats.textparse import BrokenLine

__all__ = ["REPLACE", "BrokenLine", "ReleaseFileError", "problem", "read_jsonl", "read_task_json"]

# what the user does about a release file that cannot be read (the records are the release's own data)
REPLACE = "replace it with the benchmark release's file"
LIMIT = textparse.DATA_BYTES  # bytes a release file may hold


class ReleaseFileError(ValueError):
    """A release file that exists but cannot be read; the message says what is wrong (the caller names the file)."""


def _text(path: Path, inside: Path | None) -> str:
    if inside is not None:
        real = Path(os.path.realpath(path))
        # (a link to nothing is left to the reader, which says so)
        if os.path.lexists(real) and not is_within(real, [Path(os.path.realpath(inside))]):
            what = "a symbolic link to" if os.path.islink(path) else "under a folder linked out, resolves to"
            raise ReleaseFileError(
                f"{what} {real}, outside DATA_BASEDIR {inside}: a release file is read only inside it"
            )
    try:
        return textparse.read_text(path, LIMIT)
    except textparse.TextError as exc:
        raise ReleaseFileError(exc.reason) from None


def read_task_json(path: Path, inside: Path | None = None) -> list:
    """The records of a task JSON (its top-level list, in order), or ReleaseFileError saying what is wrong.
    `inside`: DATA_BASEDIR, which the file must lie in, links resolved."""
    try:
        data = textparse.json_value(_text(path, inside), path)
    except textparse.TextError as exc:
        raise ReleaseFileError(exc.reason) from None
    if not isinstance(data, list):
        raise ReleaseFileError(f"expected a JSON list of records, got {_kind(data)}")
    return data


def read_jsonl(path: Path, inside: Path | None = None) -> list[tuple[int, object]]:
    """(0-based line number, value) of each non-blank line of a JSONL; a line that is not JSON gives a
    BrokenLine (the caller decides whether it stops the file), a file that cannot be read ReleaseFileError."""
    return textparse.jsonl_values(_text(path, inside), path)


def problem(path: Path, jsonl: bool, inside: Path | None = None) -> str | None:
    """What is wrong with a release file that exists (None: it reads; a JSONL's broken lines are its records')."""
    try:
        read_jsonl(path, inside) if jsonl else read_task_json(path, inside)
    except ReleaseFileError as exc:
        return str(exc)
    return None


def _kind(value) -> str:
    if isinstance(value, dict):
        return "an object"
    text = json.dumps(value)
    return f"{type(value).__name__} {text[:40]}{'...' if len(text) > 40 else ''}"
