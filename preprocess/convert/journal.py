"""A shard's journal: which items it has finished, so that a killed job, run again, redoes only the others.

One file beside the shard's manifest, append-only: a header line (the fingerprint of what the job builds,
so a changed config or a re-downloaded table starts afresh), then JSON lines, each a list of finished items
(an item's label, its manifest rows, its skipped-item problems, the identity of the raw files it read).
Items are batched: the first finished item goes out at once, later ones when FLUSH_ITEMS have gathered or
FLUSH_SECONDS have passed, and the rest when the executor ends a chunk or the job ends (a line per 28 px image
had cost more than a tenth of its conversion). A kill loses at most the unwritten batch, whose items a rerun
simply converts again. Each line goes out in one `write` on a descriptor opened with O_APPEND, so forked
helpers can share the file and a kill leaves at most one torn last line, which reading ignores.

A rerun takes an item from the journal only when nothing it was made from or made has changed: the raw files
it read have the size and mtime they had (a re-downloaded volume is converted again), and every file its rows
name still holds the size and SHA-256 its row records (an output truncated or replaced since is removed, it
is this shard's own file, and the item converted again). A journal that is not one this code wrote (valid JSON
of another shape) is named in the log and the shard starts afresh. The journal goes once the manifest (the
job's done-marker) is written.
"""

from __future__ import annotations

import glob as globlib
import hashlib
import json
import os
import re
import time
from dataclasses import asdict
from pathlib import Path

from preprocess.convert.compare import KEPT
from preprocess.formats import textparse
from preprocess.formats.fsutil import file_digest
from preprocess.registry import layout

VERSION = 3
FLUSH_ITEMS = 512
FLUSH_SECONDS = 0.5

# Settings that never change a conversion's output bytes: which subsets and splits a run builds (a shard's
# own conversion and shard are in the fingerprint), how the raw check and validation work, how often progress
# is logged, where the release is downloaded from. Every other setting is in the fingerprint, so a setting
# added later restarts shards rather than resuming them wrongly.
NOT_OUTPUT_SETTINGS = frozenset(
    {"subsets", "splits", "shards", "demo", "verify_checksums", "validate_decode", "allow_download"}
    | {"progress_interval", "raw_root_given", "build", "download_deadline", "download_max_bytes", "release_repo"}
)
_DETAIL = re.compile(r"([0-9]+):([0-9a-f]{64})")  # a file row's detail: size:sha256


def fingerprint(ctx) -> str:
    """What decides a shard's outputs: the conversion and its params, its shard, every setting that changes an
    output, the raw folders it reads and the identity (size, mtime) of the raw files the registry names by path
    or as a set of shards (the tables, archives and npz files every item of the shard is made from)."""
    settings = {k: v for k, v in asdict(ctx.settings).items() if k not in NOT_OUTPUT_SETTINGS}
    needed = ctx.registry.files_needed(ctx.subset)
    folders = {source_id: layout.raw_dir(ctx.settings.raw_root, ctx.registry.source(source_id)) for source_id in needed}
    named = sorted({path for s, specs in needed.items() for spec in specs for path in _named(folders[s], spec)})
    facts = {
        "subset": ctx.subset.key,
        "conversion": ctx.conversion.name,
        "kind": ctx.conversion.kind,
        "params": ctx.conversion.params,
        "shard": [ctx.shard, ctx.shards],
        "settings": settings,
        "orientation": ctx.settings.orientation_for(ctx.subset.key),
        "raw_folders": folders,
        "raw_files": {path: _identity(path) for path in named},
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()


def _named(folder: Path, spec) -> list[str]:
    """The raw files of a spec that every item may depend on: its paths, or the matches of a shard set (a few
    files, numbered across: one re-downloaded shard renumbers the rest)."""
    if spec.shards:
        return globlib.glob(os.path.join(globlib.escape(str(folder)), spec.glob))
    return [str(folder / path) for path in spec.paths]


def _identity(path: str) -> list[int] | None:
    """A raw file's size and mtime in nanoseconds (None when absent or unreadable): what a re-download changes."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return None
    return [stat.st_size, stat.st_mtime_ns]


def journal_path(manifest: Path) -> Path:
    return manifest.with_name(manifest.name + ".journal")


class Journal:
    def __init__(self, path: Path, stamp: str, data_basedir: Path, log):
        self.path, self.base = path, os.fspath(data_basedir)
        self.pending: list = []  # finished items not yet written
        self.flushed_at: float | None = None  # when the last batch went out (None: none has yet)
        self.identities: dict[str, list[int] | None] = {}  # raw file -> size, mtime, looked up once a process
        self.inputs_seen: dict[tuple[str, ...], str] = {}  # the raw files an item read -> their identity digest
        self.entries, problem = _read(path, stamp)
        if self.entries is None:
            if problem is not None:
                log(f"{path}: {problem}; starting the shard afresh")
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

    def inputs(self, reads) -> str:
        """The identity of the raw files an item reads (Result.reads), as one short text."""
        if not reads:
            return ""
        key = tuple(map(os.fspath, reads))
        if key in self.inputs_seen:  # items of one archive all read that archive: one digest serves them all
            return self.inputs_seen[key]
        facts = []
        for read in reads:
            name = os.fspath(read)
            if name not in self.identities:
                self.identities[name] = _identity(name)
            facts.append((name, self.identities[name]))
        self.inputs_seen[key] = hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:32]
        return self.inputs_seen[key]

    def finished(self, label: str, inputs: str = "") -> tuple[list, list] | None:
        """The rows and problems of an item an earlier run finished, if the raw files it read are unchanged and
        every file it wrote still holds what its row records. Otherwise the files it wrote are removed (this
        shard's own: the journal lists them), so that the item is converted again as in a fresh build."""
        entry = self.entries.get(label)
        if entry is None:
            return None
        rows, problems, recorded = entry
        if recorded == inputs and all(self._intact(row) for row in rows):
            return rows, problems
        for path, kind, _ in rows:
            full = os.path.join(self.base, path)
            if kind != KEPT and (os.path.islink(full) or os.path.isfile(full)):  # a kept file is not ours
                os.unlink(full)
        return None

    def _intact(self, row) -> bool:
        """Does the file of a manifest row still hold what the row records (size and SHA-256 of a file, the
        target of a link; any other row: that its path exists)?"""
        path, kind, detail = row
        full = os.path.join(self.base, path)
        if kind == "symlink":
            try:
                return os.readlink(full) == detail
            except OSError:
                return False
        recorded = _DETAIL.fullmatch(detail.split(" ", 1)[0] if kind == KEPT else detail)
        if recorded is None:
            return os.path.lexists(full)
        try:
            if os.path.islink(full) or os.stat(full).st_size != int(recorded[1]):
                return False
            return file_digest(Path(full), "sha256") == recorded[2]
        except OSError:
            return False

    def record(self, label: str, rows: list, problems: list, inputs: str = "") -> None:
        self.pending.append((label, rows, problems, inputs))
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


def _read(path: Path, stamp: str) -> tuple[dict | None, str | None]:
    """label -> (rows, problems, inputs) of a journal written with `stamp`, else None and why (None: absent)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    except FileNotFoundError:
        return None, None
    try:
        header = textparse.json_value(lines[0], path, line=1)
    except textparse.TextError:
        header = None
    if not isinstance(header, dict) or not {"journal", "fingerprint"} <= header.keys():
        return None, "not a journal of this pipeline (its first line is no journal header)"
    if header["fingerprint"] != stamp or header["journal"] != VERSION:
        return None, "written for another configuration, other raw files or another version"
    entries = {}
    for number, line in enumerate(lines[1:], start=2):
        try:
            batch = textparse.json_value(line, path, line=number)
        except textparse.TextError:
            continue  # the torn last line of a killed run, or the empty string after the final newline
        if not isinstance(batch, list) or not all(_is_entry(entry) for entry in batch):
            return None, f"line {number} is not a list of finished items as this version writes them"
        for label, rows, problems, inputs in batch:
            entries[label] = ([tuple(row) for row in rows], [tuple(p) for p in problems], inputs)
    return entries, None


def _is_entry(entry) -> bool:
    """[label, rows, problems, inputs]: rows of three texts whose path stays inside DATA_BASEDIR, problems
    of two texts."""
    if not (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str) and isinstance(entry[3], str)):
        return False
    rows, problems = entry[1], entry[2]
    return (
        isinstance(rows, list)
        and all(_texts(row, 3) and _inside(row[0]) for row in rows)
        and isinstance(problems, list)
        and all(_texts(problem, 2) for problem in problems)
    )


def _texts(value, count: int) -> bool:
    return isinstance(value, list) and len(value) == count and all(isinstance(v, str) for v in value)


def _inside(relative: str) -> bool:
    """A row's path: relative, without a '..' part (a journal never names a file outside DATA_BASEDIR)."""
    return bool(relative) and not os.path.isabs(relative) and ".." not in relative.split(os.sep)
