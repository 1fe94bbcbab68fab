"""Check a raw download: present, missing, incomplete or corrupt, and why."""

from __future__ import annotations

import glob as globlib
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from preprocess.errors import RawDataError
from preprocess.formats import hfshards, unpacked
from preprocess.formats.archive import archive_problem
from preprocess.formats.checksums import ChecksumCache
from preprocess.formats.npzio import structure_problems
from preprocess.formats.rawroot import Boundary
from preprocess.rawdata import unpublished
from preprocess.registry import layout, splits
from preprocess.registry.model import FileSpec, Registry, Source

PRESENT, MISSING, INCOMPLETE, CORRUPT = "present", "missing", "incomplete", "corrupt"
ARCHIVES = (".zip", ".npz")  # their member list is read: a bomb, an encrypted member or an unread method is named


@dataclass
class FileResult:
    id: str
    spec: str
    status: str  # ok | missing | too_few | corrupt | unusable (not a regular file inside the raw root)
    found: list[str] = field(default_factory=list)
    count: int = 0
    expected_count: int = 1
    md5_expected: str | None = None
    md5_actual: str | None = None
    detail: str | None = None
    bad: list[str] = field(default_factory=list)  # matches of a glob that cannot be used, with why (first 20)
    bad_count: int = 0
    about: str | None = None  # the registry's word on what the file holds and why it is read
    layout: str | None = None  # which of the layouts the registry accepts was found (a folder's level, a name)
    unpublished: str | None = None  # missing, and no public listing of the upstream holds it (unpublished.py)

    @property
    def reason(self) -> str:
        if self.status == "ok":
            return "ok"
        about = f" ({self.about})" if self.about else ""
        if self.status == "missing" and self.unpublished:
            return f"not published upstream: {self.spec}{about}: {self.unpublished}"
        return self._problem() + about

    def _problem(self) -> str:
        if self.status == "unusable":
            return self.detail
        if self.status == "missing":
            return f"missing: {self.detail or self.spec}"
        if self.status == "too_few":
            return (
                self.detail
                or f"too few files: {self.spec} matches {self.count}, expected at least {self.expected_count}"
            )
        if self.status == "corrupt" and self.detail:
            return f"wrong content: {self.detail}"
        return f"checksum differs: {self.found[0]} md5 {self.md5_actual}, expected {self.md5_expected}"


@dataclass
class SourceCheck:
    source: str
    status: str
    raw_dir: str
    files: list[FileResult]
    checksums_verified: bool
    instructions: str
    layout: list[str] = field(default_factory=list)  # the layouts found where the registry accepts several

    @property
    def reasons(self) -> list[str]:
        reasons = []
        for result in self.files:  # first: the check table shows the first reason
            if result.bad_count:
                more = f" (+{result.bad_count - 1} more of {result.spec})" if result.bad_count > 1 else ""
                reasons.append(f"unusable: {result.bad[0]}{more}")
        return reasons + [f.reason for f in self.files if f.status != "ok"]

    @property
    def unusable(self) -> list[str]:
        """The files found that cannot be used: a named file, or matches of a glob (the first 20 of each)."""
        lines = [r.detail for r in self.files if r.status == "unusable"]
        return lines + [f"{self.raw_dir}/{line}" for result in self.files for line in result.bad]

    def file_ok(self, file_id: str) -> bool:
        return any(f.id == file_id and f.status == "ok" for f in self.files)

    def asked_for(self, source: Source) -> bool:
        """Whether this check looked for exactly the files `source` lists (splits.checked_source: those the
        build's splits ask for). A check made for other splits, a test-only one when train files are now
        wanted, says nothing about the files it never looked for: it is to be done again, not trusted."""
        return [(f.id, f.spec) for f in self.files] == [(s.id, s.label) for s in source.files]

    def to_json(self) -> dict:
        data = asdict(self)
        data["reasons"] = self.reasons
        return data

    @classmethod
    def from_json(cls, data: dict) -> SourceCheck:
        files = [FileResult(**f) for f in data["files"]]
        return cls(
            data["source"], data["status"], data["raw_dir"], files, data["checksums_verified"], data["instructions"],
            data.get("layout", []),
        )  # fmt: skip


def _glob(base: Path, pattern: str) -> list[Path]:
    escaped = globlib.escape(str(base))
    return sorted(Path(p) for p in globlib.glob(os.path.join(escaped, pattern), recursive=True))


def _content(base: Path, folder: Path, spec: FileSpec, boundary: Boundary, result: FileResult) -> bool:
    """Whether `folder` (a spec's folder, present) holds the spec's content, at its top or one level deeper
    (formats/unpacked.py); when not, the result says so, naming the folder expected."""
    found, problem = unpacked.content_folder(folder, spec.holds, boundary)
    if found is None:
        missing = problem == unpacked.expected(folder, spec.holds)
        result.status, result.detail = ("missing" if missing else "unusable"), problem
        return False
    result.found = [str(found.relative_to(base))]
    result.layout = f"{result.found[0]}/ holds {' or '.join(spec.holds)}"
    if found != folder:
        result.layout += f", one level deeper than {folder.relative_to(base)}/ (unpacked into a folder of its name)"
    return True


def _shard_problem(base: Path, spec: FileSpec, matches: list[Path], result: FileResult) -> bool:
    """Whether a glob's matches fail to be one complete set of shards; when they do, the result says how."""
    problem = hfshards.set_problem([m.relative_to(base).as_posix() for m in matches])
    if problem is not None:
        result.status, result.detail = "too_few", f"{spec.glob}: {problem}"
    return problem is not None


def _present(base: Path, spec: FileSpec) -> tuple[str, Path] | None:
    """(name, path) of the first of a named spec's paths that is there: a folder of its content (when the spec
    holds one, or a link to such a folder) or anything else at that name; None when none is."""
    for candidate in spec.paths:
        path = base / candidate
        if (spec.holds and os.path.isdir(path)) or os.path.lexists(path):
            return candidate, path
    return None


def _hashed(base: Path, spec: FileSpec, verify: bool, boundary: Boundary) -> Path | None:
    """The file whose MD5 check_file compares for `spec`, or None: a named file with an MD5, when checksums are
    verified, present, not a folder of its content and usable (rawroot.Boundary)."""
    if spec.glob or not (spec.md5 and verify):
        return None
    present = _present(base, spec)
    if present is None or (spec.holds and os.path.isdir(present[1])):
        return None
    path = present[1]
    return path if boundary.problem(path) is None else None


def check_file(base: Path, spec: FileSpec, md5: Callable[[Path], str], verify: bool, boundary: Boundary) -> FileResult:
    """One file spec: found or not, and usable (rawroot.Boundary: a regular file inside the raw root) or not.
    `md5(path)`: the MD5 of a file (check_source reads them all first, across files on its threads)."""
    result = FileResult(
        spec.id, spec.label, "ok", expected_count=spec.min_count, md5_expected=spec.md5, about=spec.about
    )
    if spec.glob:
        folder = base / spec.glob_folder if spec.holds else None
        if folder is not None and os.path.lexists(folder) and not _content(base, folder, spec, boundary, result):
            return result
        matches = _glob(base, spec.glob)
        folders = bool(matches) and all(m.is_dir() for m in matches)  # a glob of folders (files/p1[0-9])
        good = []
        for match in matches:
            problem = boundary.problem(match, folder=folders)
            if problem is None and match.suffix in ARCHIVES:  # a zip bomb is no more usable than a missing file
                problem = archive_problem(match)
            if problem is None:
                good.append(match)
            else:
                result.bad_count += 1
                if len(result.bad) < 20:
                    result.bad.append(f"{match.relative_to(base)} {problem}")
        # Bad matches count towards min_count: the conversion meets them as items, and on_bad_input decides.
        result.count = len(matches)
        result.found = [str(m.relative_to(base)) for m in good[:3]]
        if not matches:
            result.status = "missing"
        elif len(matches) < spec.min_count:
            result.status = "too_few"
        elif spec.shards:
            _shard_problem(base, spec, matches, result)
        return result
    present = _present(base, spec)
    if present is None:
        result.status = "missing"
        return result
    candidate, path = present
    if spec.holds and os.path.isdir(path):  # a folder of the content, or a link to one: judged as a folder
        result.count = 1
        _content(base, path, spec, boundary, result)
        return result
    result.found, result.count = [candidate], 1
    if len(spec.paths) > 1:
        result.layout = f"{candidate}, of the names accepted ({spec.label})"
    problem = boundary.problem(path)
    if problem is not None:
        result.status, result.detail = "unusable", f"{path} {problem}"
        return result
    if spec.md5 and verify:
        result.md5_actual = md5(path)
        if result.md5_actual != spec.md5:
            result.status = "corrupt"
            return result
    if spec.npz:
        problems = structure_problems(path, spec.npz)
        if problems:
            result.status, result.detail = "corrupt", "; ".join(problems[:5])
    elif path.suffix in ARCHIVES and (problem := archive_problem(path)):
        result.status, result.detail = "corrupt", f"{path} {problem}"
    return result


def check_source(
    source: Source, raw_root: Path, cache: ChecksumCache, verify: bool = True, threads: int = 1,
    notes: dict[str, str] | None = None,
) -> SourceCheck:  # fmt: skip
    """The check of one source's download. The MD5s it compares are read first, on up to `threads` threads
    across files (ChecksumCache.md5_all; sizing/checkjobs.py says how many pay), then every spec is judged in
    the registry's order: the same results, and report, on any number of threads. `notes`: file id -> why a
    file the upstream does not publish is absent (unpublished.note), said of it when it is missing."""
    base = layout.raw_dir(raw_root, source)
    if base.is_dir():
        boundary = Boundary(raw_root, base)
        hashed = [path for spec in source.files if (path := _hashed(base, spec, verify, boundary)) is not None]
        digests = cache.md5_all(hashed, threads)

        def md5(path: Path) -> str:  # a file that became usable since it was listed: read now
            return digests[path] if path in digests else cache.md5(path)

        results = [check_file(base, spec, md5, verify, boundary) for spec in source.files]
    else:
        results = [
            FileResult(s.id, s.label, "missing", expected_count=s.min_count, md5_expected=s.md5) for s in source.files
        ]
    for result in results:
        if result.status == "missing":
            result.unpublished = (notes or {}).get(result.id)
    found = [f"{r.id}: {r.layout}" for r in results if r.status == "ok" and r.layout]
    if base != Path(raw_root) / source.raw_dir:
        found.insert(0, f"its files are under {source.project_folder}/, the folder a whole-project download adds")
    statuses = {r.status for r in results}
    if statuses == {"missing"}:
        status = MISSING
    elif statuses & {"corrupt", "unusable"}:
        status = CORRUPT
    elif statuses - {"ok"}:
        status = INCOMPLETE
    else:
        status = PRESENT
    instructions = source.instructions.replace("<raw_root>", str(raw_root))
    return SourceCheck(source.id, status, str(base), results, verify, instructions, found)


def fingerprint(source: Source, raw_root: Path) -> str:
    """A cheap digest of what could change a check: stats of the folders and files the specs name.

    Folder mtimes change when entries are added or removed, so no file listing is needed.
    """
    base = layout.raw_dir(raw_root, source)
    digest = hashlib.sha1(json.dumps([source.raw_dir, [asdict(f) for f in source.files]]).encode())

    def add(path: Path) -> None:
        try:
            stat = path.stat()
            digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
        except OSError:
            digest.update(f"{path}:absent\n".encode())

    add(base)
    for spec in source.files:
        for candidate in spec.paths:
            add(base / candidate)
        if spec.glob:
            # Stop at '**': listing a deep tree on every plan would cost seconds.
            folder_pattern = spec.glob.split("**")[0].rstrip("/") if "**" in spec.glob else os.path.dirname(spec.glob)
            folders = _glob(base, folder_pattern) if folder_pattern else [base]
            for folder in folders[:10000]:
                add(folder)
    return digest.hexdigest()


def check_all(
    registry: Registry, settings, source_ids, results_dir: Path | None, threads: dict[str, int] | None = None
) -> dict[str, SourceCheck]:
    """The check of each source, on the threads `threads` gives it (default one: check_source)."""
    checks = {}
    for source_id in source_ids:
        source = splits.checked_source(registry, settings, registry.source(source_id))
        if settings.allow_download and source.access == "open":
            from preprocess.rawdata.fetch import fetch_open, limits  # requests only when downloads are allowed

            fetch_open(source, settings.raw_root, bounds=limits(settings))
        cache = ChecksumCache(layout.checksum_cache(results_dir, source_id) if results_dir else None)
        verify = settings.verifies_checksums(source_id)
        notes = {
            spec.id: unpublished.note(registry, source, spec).replace("<raw_root>", str(settings.raw_root))
            for spec in source.files
            if spec.unpublished
        }
        threads_of = (threads or {}).get(source_id, 1)
        checks[source_id] = check_source(source, settings.raw_root, cache, verify, threads_of, notes)
        cache.save()
    return checks


def subset_missing(registry: Registry, subset, checks: dict[str, SourceCheck], only=None, settings=None) -> list[str]:
    """What the subset needs for the splits it builds (`settings`' splits; None: test) of the sources in `only`
    (default all) that the checks did not find whole."""
    problems = []
    for source_id, specs in splits.files(registry, settings, subset).items():
        if only is not None and source_id not in only:
            continue
        check = checks[source_id]
        results = {f.id: f for f in check.files}
        for spec in specs:
            if spec.id not in results:  # callers redo such a check first (`current`): never guess
                raise RawDataError(
                    f"the check of {source_id} was made for other splits and did not look for {spec.label}: "
                    "rerun the workflow with --forcerun check_source"
                )
            if not check.file_ok(spec.id):
                problems.append(f"{source_id}: {results[spec.id].reason}")
    return problems


def current(registry: Registry, settings, check: SourceCheck) -> bool:
    """Whether `check` looked for the files this build's splits ask of its source (SourceCheck.asked_for)."""
    return check.asked_for(splits.checked_source(registry, settings, registry.source(check.source)))
