"""The one reader of the release's own files: its task JSONs (a JSON list of records) and its Train_Data JSONLs
(one record a line). validate, attest, check, plan, status and convert all read them here, so a file that
exists but cannot be read is named the same way by every command, with what is wrong with it: not a regular
file (a FIFO would block a plain read forever), a link to nothing, not UTF-8, not JSON, nested too deep for
Python's parser (json raises RecursionError), or not a list of records.
"""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass
from pathlib import Path

from preprocess.formats.fsutil import open_regular

# what the user does about a release file that cannot be read (the records are the release's own data)
REPLACE = "replace it with the benchmark release's file"


class ReleaseFileError(ValueError):
    """A release file that exists but cannot be read; the message says what is wrong (the caller names the file)."""


@dataclass(frozen=True)
class BrokenLine:
    """A line of a JSONL that is not a JSON value (the rest of the file is still read)."""

    reason: str


def _text(path: Path) -> str:
    try:
        with open_regular(path) as handle:  # O_NONBLOCK and fstat: a FIFO is named, never waited on
            data = handle.read()
    except FileNotFoundError:
        if os.path.islink(path):
            raise ReleaseFileError(f"a symbolic link to {os.readlink(path)}, which does not exist") from None
        raise ReleaseFileError("no such file (it went while being read)") from None
    except OSError as exc:
        if exc.errno == errno.EINVAL:  # open_regular's own: what the file is instead of a regular file
            raise ReleaseFileError(exc.strerror) from None
        raise ReleaseFileError(f"cannot be read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8-sig")  # the release's files are UTF-8; some carry a byte order mark
    except UnicodeDecodeError as exc:
        raise ReleaseFileError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start} cannot be decoded)"
        ) from None


def read_task_json(path: Path) -> list:
    """The records of a task JSON (its top-level list, in order), or ReleaseFileError saying what is wrong."""
    text = _text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReleaseFileError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ReleaseFileError("lists or objects nested too deep to read") from None
    if not isinstance(data, list):
        raise ReleaseFileError(f"expected a JSON list of records, got {_kind(data)}")
    return data


def read_jsonl(path: Path) -> list[tuple[int, object]]:
    """(0-based line number, value) of each non-blank line of a JSONL; a line that is not JSON gives a
    BrokenLine (the caller decides whether it stops the file), a file that cannot be read ReleaseFileError.
    Lines end at '\\n' only: splitlines() would also cut a record at a U+2028 or U+0085 inside a string."""
    rows = []
    for number, line in enumerate(_text(path).split("\n")):
        if line.strip():
            try:
                rows.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                rows.append((number, BrokenLine(f"line {number + 1} is not valid JSON: {exc.msg}")))
            except RecursionError:
                rows.append((number, BrokenLine(f"line {number + 1} nests lists or objects too deep to read")))
    return rows


def problem(path: Path, jsonl: bool) -> str | None:
    """What is wrong with a release file that exists (None: it reads; a JSONL's broken lines are its records')."""
    try:
        read_jsonl(path) if jsonl else read_task_json(path)
    except ReleaseFileError as exc:
        return str(exc)
    return None


def _kind(value) -> str:
    if isinstance(value, dict):
        return "an object"
    text = json.dumps(value)
    return f"{type(value).__name__} {text[:40]}{'...' if len(text) > 40 else ''}"
