"""Remembered MD5s of raw files, so that re-checking an unchanged copy reads nothing."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
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
        return self.md5_all([file])[file]

    def md5_all(self, files: list[Path], threads: int = 1) -> dict[Path, str]:
        """The MD5 of each of `files`. Those not remembered are read on up to `threads` threads, one file a
        thread at a time (hashlib lets go of the GIL while it digests a chunk, so the threads hash side by side:
        benchmarks/stage_costs.py measures how much faster); every entry is looked up and recorded here, in the
        calling thread, so the cache needs no lock."""
        found: dict[Path, str] = {}
        todo = []
        for file in dict.fromkeys(files):
            stat = file.stat()  # before reading: a file changed while it is read is read again next time
            key = str(file.resolve())
            cached = self.entries.get(key)
            if cached and cached[0] == stat.st_size and cached[1] == stat.st_mtime_ns:
                self.hits += 1
                found[file] = cached[2]
            else:
                todo.append((file, key, stat))
        workers = max(1, min(threads, len(todo)))
        if workers == 1:
            values = [file_digest(file, "md5") for file, _, _ in todo]
        else:
            with ThreadPoolExecutor(workers) as pool:
                values = list(pool.map(lambda job: file_digest(job[0], "md5"), todo))
        for (file, key, stat), value in zip(todo, values, strict=True):
            self.entries[key] = [stat.st_size, stat.st_mtime_ns, value]
            found[file] = value
        return found

    def save(self) -> None:
        if self.path:
            atomic_write_json(self.path, self.entries)
