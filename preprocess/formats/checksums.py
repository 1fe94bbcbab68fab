"""Remembered MD5s of raw files, so that re-checking an unchanged copy reads nothing."""

from __future__ import annotations

from pathlib import Path

from preprocess.formats import textparse
from preprocess.formats.fsutil import atomic_write_json, file_digest


class ChecksumCache:
    """MD5s remembered by (path, size, mtime): re-checking an unchanged terabyte copy reads nothing."""

    def __init__(self, path: Path | None):
        self.path = path
        self.entries: dict = {}
        self.hits = 0
        if path and path.exists():
            try:  # a cache that cannot be read is computed again, never trusted
                entries = textparse.read_json(path, textparse.DATA_BYTES)
            except textparse.TextError:
                entries = {}
            self.entries = entries if isinstance(entries, dict) else {}

    def md5(self, file: Path) -> str:
        stat = file.stat()
        key = str(file.resolve())
        cached = self.entries.get(key)
        if cached and cached[0] == stat.st_size and cached[1] == stat.st_mtime_ns:
            self.hits += 1
            return cached[2]
        value = file_digest(file, "md5")
        self.entries[key] = [stat.st_size, stat.st_mtime_ns, value]
        return value

    def save(self) -> None:
        if self.path:
            atomic_write_json(self.path, self.entries)
