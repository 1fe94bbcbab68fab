"""JSON-Schema checks of the registry and the configuration, remembered between processes.

Every command and every workflow job loads the registry and the configuration and checks them against their
schemas; importing jsonschema and running those checks was a fifth of the start-up of a short job (the
README's MedMNIST and volume sections). A check that passed is noted by its digest (the schema and the
document, both canonical JSON) in the results folder, `cache/schema-checks`, one digest a line, appended in
one write so that concurrent jobs can share it; a process that finds the digest there skips the check. Any
change to a registry file, an override, the configuration or a schema makes a new digest, which is checked.
Without a results folder (a library call, a test) every check runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

VERSION = 1
CACHE_FILE = Path("cache") / "schema-checks"
_STATE: dict = {"file": None, "known": None, "held": None}


def remember_in(results: Path | str | None) -> None:
    """Note passed checks under this results folder (None: remember nothing, check everything)."""
    _STATE["file"] = None if results is None else Path(results) / CACHE_FILE
    _STATE["known"] = None


def digest(schema: dict, document) -> str:
    """The check's key. A top-level text whose schema asks for nothing but text (a folder in the configuration)
    counts as any text: `--data-basedir` pointing elsewhere passes or fails as before, so it is not checked
    again."""
    if isinstance(document, dict):
        properties = schema.get("properties", {})
        document = {key: "" if _any_text(properties.get(key), value) else value for key, value in document.items()}
    text = json.dumps([VERSION, schema, document], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _any_text(schema, value) -> bool:
    return (
        isinstance(value, str)
        and isinstance(schema, dict)
        and set(schema) <= _TEXT_ONLY
        and schema.get("type") == "string"
    )


_TEXT_ONLY = {"type", "description"}


def passed_before(key: str) -> bool:
    if _STATE["file"] is None:
        return False
    if _STATE["known"] is None:
        try:
            _STATE["known"] = set(_STATE["file"].read_text(encoding="ascii", errors="replace").split())
        except OSError:  # no cache yet, or an unreadable one: check
            _STATE["known"] = set()
    return key in _STATE["known"]


@contextlib.contextmanager
def writes_held():
    """Checks that pass in this block are noted only when it ends without an error: the settings that name the
    results folder are checked before anything is written there (it might lie inside the raw root)."""
    _STATE["held"] = []
    try:
        yield
        held = _STATE["held"]
    finally:
        _STATE["held"] = None
    for key in held:
        note_passed(key)


def note_passed(key: str) -> None:
    path = _STATE["file"]
    if path is None or key in (_STATE["known"] or ()):
        return
    if _STATE["held"] is not None:
        _STATE["held"].append(key)
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o666)
        try:
            os.write(descriptor, f"{key}\n".encode("ascii"))
        finally:
            os.close(descriptor)
    except OSError:  # a read-only results folder: the check simply runs again next time
        return
    if _STATE["known"] is not None:
        _STATE["known"].add(key)
