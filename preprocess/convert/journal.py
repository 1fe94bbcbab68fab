"""A shard's journal: which items it has finished, so that a killed job, run again, redoes only the others.

One file beside the shard's manifest, append-only: a header line (the fingerprint of what the job builds,
so a changed config starts afresh), then JSON lines, each a list of finished items (an item's label, its
manifest rows, its skipped-item problems). Items are batched: the first finished item goes out at once, later
ones when FLUSH_ITEMS have gathered or FLUSH_SECONDS have passed, and the rest when the executor ends a chunk
or the job ends (a line per 28 px image had cost more than a tenth of its conversion). A kill loses at most
the unwritten batch, whose items a rerun simply converts again. Each line goes out in one `write` on a
descriptor opened with O_APPEND, so forked helpers can share the file and a kill leaves at most one torn last
line, which reading ignores. A rerun takes an item from the journal when every file its rows name still
exists; the journal goes once the manifest (the job's done-marker) is written.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

VERSION = 2
FLUSH_ITEMS = 512
FLUSH_SECONDS = 0.5


def fingerprint(ctx) -> str:
    """What decides a shard's outputs: the conversion, its shard, the folders and the settings it reads."""
    settings = ctx.settings
    facts = {
        "subset": ctx.subset.key,
        "conversion": ctx.conversion.name,
        "kind": ctx.conversion.kind,
        "params": ctx.conversion.params,
        "shard": [ctx.shard, ctx.shards],
        "data_basedir": str(settings.data_basedir),
        "raw_root": str(settings.raw_root),
        "on_bad_input": settings.on_bad_input,
        "overwrite_existing": settings.overwrite_existing,
        "source_variants": settings.source_variants,
        "orientation": settings.orientation_for(ctx.subset.key),
        "drr": settings.drr,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()


def journal_path(manifest: Path) -> Path:
    return manifest.with_name(manifest.name + ".journal")


class Journal:
    def __init__(self, path: Path, stamp: str, data_basedir: Path, log):
        self.path, self.base = path, os.fspath(data_basedir)
        self.pending: list = []  # finished items not yet written
        self.flushed_at: float | None = None  # when the last batch went out (None: none has yet)
        self.entries = _read(path, stamp)
        if self.entries is None:
            if path.exists():
                log(f"{path}: written for another configuration; starting the shard afresh")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"journal": VERSION, "fingerprint": stamp}) + "\n", encoding="utf-8")
            self.entries = {}
        elif self.entries:
            log(f"resuming: {len(self.entries)} items finished by an earlier run are taken from {path}")
        self.descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        with open(path, "rb") as handle:  # a torn last line is ended, so the next record starts its own
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                os.write(self.descriptor, b"\n")

    def finished(self, label: str) -> tuple[list, list] | None:
        """The rows and problems of an item an earlier run finished, if its files are all still there."""
        entry = self.entries.get(label)
        if entry is None:
            return None
        rows, problems = entry
        if all(os.path.lexists(os.path.join(self.base, row[0])) for row in rows):
            return rows, problems
        return None

    def record(self, label: str, rows: list, problems: list) -> None:
        self.pending.append((label, rows, problems))
        if (
            self.flushed_at is None
            or len(self.pending) >= FLUSH_ITEMS
            or time.monotonic() - self.flushed_at >= FLUSH_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        """Write the finished items not yet written, as one line."""
        self.flushed_at = time.monotonic()
        if not self.pending or self.descriptor is None:
            return
        line = (json.dumps(self.pending, ensure_ascii=False) + "\n").encode("utf-8")
        self.pending = []
        view = memoryview(line)
        while view:
            view = view[os.write(self.descriptor, view) :]

    def close(self, remove: bool = False) -> None:
        if self.descriptor is not None:
            self.flush()
            os.close(self.descriptor)
            self.descriptor = None
        if remove:
            self.path.unlink(missing_ok=True)


def _read(path: Path, stamp: str) -> dict | None:
    """label -> (rows, problems) of a journal written with `stamp`; None when absent or for another config."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    except FileNotFoundError:
        return None
    try:
        header = json.loads(lines[0])
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("fingerprint") != stamp or header.get("journal") != VERSION:
        return None
    entries = {}
    for line in lines[1:]:
        try:
            batch = [(label, rows, problems) for label, rows, problems in json.loads(line)]
        except (ValueError, TypeError):
            continue  # the torn last line of a killed run, or the empty string after the final newline
        for label, rows, problems in batch:
            entries[label] = ([tuple(row) for row in rows], [tuple(p) for p in problems])
    return entries
