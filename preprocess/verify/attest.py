"""Pixel fingerprints of a built tree (`python -m preprocess attest`): what a lab publishes to show that its
images are the authors' images, and the comparison of two such files.

What is listed: every image path that a registered task JSON of a built subset names (its parser's image
fields, joined to the task's image root as the evaluation joins them) and, when the subset's train split is
built (`splits: all`), every path of its Train_Data JSON Lines (relative to DATA_BASEDIR). A subset is built
when its task files and its image root exist; text subsets have no images and are not listed. A path named by
several records or task files of a subset is listed once; a path two subsets name is listed under each.

The file it writes is fingerprintfile.py's; the pixel digest pixelhash.py's; the comparison of two files
fingerprintcompare.py's.
"""

from __future__ import annotations

import errno
import functools
import os
import posixpath
import stat
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from preprocess.convert.forks import ctrl_c_held, let_ctrl_c_through
from preprocess.errors import PreprocessError, UnsafePathError
from preprocess.formats.fsutil import clipped, file_digest, safe_relative
from preprocess.registry import layout, splits
from preprocess.registry.model import Registry, Subset
from preprocess.release import records, trainlist
from preprocess.verify import validate
from preprocess.verify.fingerprintfile import (
    MISSING,
    NONE,
    OK,
    UNDECODABLE,
    UNSAFE,
    Attestation,
    Entry,
    read_header,
    write_entries,
)
from preprocess.verify.pixelhash import pixel_fingerprint

CHUNK = 32  # paths a worker takes at a time


@dataclass(frozen=True)
class Job:
    """One named image: where it is, and the folders a link from it may lead into."""

    subset: str
    path: str  # relative to DATA_BASEDIR, as named
    full: str  # absolute, before links are followed ('' when the name is unsafe)
    allowed: tuple[str, ...]  # real paths


@functools.lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    """The real path of a folder (images share folders: one resolution each, not one per image)."""
    return os.path.realpath(folder)


def fingerprint_job(job: Job) -> Entry:
    if not job.full:
        return Entry(job.subset, job.path, UNSAFE)
    try:
        info = os.lstat(job.full)
        if stat.S_ISLNK(info.st_mode):
            real = os.path.realpath(job.full)
            info = os.stat(real)
        else:
            folder, name = os.path.split(job.full)
            real = os.path.join(_real_folder(folder), name)
    except (FileNotFoundError, NotADirectoryError):
        return Entry(job.subset, job.path, MISSING)  # no such file, or a broken link
    except OSError as exc:  # too long joined to DATA_BASEDIR names no file; no permission to look: nothing to hash
        return Entry(job.subset, job.path, UNSAFE if exc.errno == errno.ENAMETOOLONG else UNDECODABLE)
    if not any(real == root or real.startswith(root + os.sep) for root in job.allowed):
        return Entry(job.subset, job.path, UNSAFE)
    if not stat.S_ISREG(info.st_mode):
        return Entry(job.subset, job.path, UNDECODABLE)
    try:
        return Entry(job.subset, job.path, OK, *pixel_fingerprint(real))
    except Exception:  # any decoder failure means the same here: these bytes are no image
        try:
            file_hash = file_digest(Path(real), "sha256")
        except OSError:
            file_hash = NONE
        return Entry(job.subset, job.path, UNDECODABLE, sha256=file_hash)


def _fingerprint_chunk(jobs: list[Job]) -> list[Entry]:
    return [fingerprint_job(job) for job in jobs]


# --- what a tree names ---------------------------------------------------------------------------------


@dataclass
class Named:
    """The images one subset names, and the records left out (they fail the task schema: validate names them)."""

    subset: Subset
    jobs: dict[str, Job] = field(default_factory=dict)
    bad_records: int = 0
    unreadable_files: list[str] = field(default_factory=list)


def built_subsets(registry: Registry, subsets, data_basedir: Path) -> list[Subset]:
    """The image subsets among `subsets` whose image root and at least one task file exist."""
    found = []
    for subset in subsets:
        root = layout.image_root(data_basedir, subset)
        if root is None or not root.is_dir():
            continue
        if any(path.is_file() for path in layout.task_files(data_basedir, subset)):
            found.append(subset)
    return sorted(found, key=lambda s: s.key)


def named_images(registry: Registry, subset: Subset, data_basedir: Path, raw_root: Path | None, train: bool) -> Named:
    """Every image path the subset's task files (and, with `train`, its Train_Data files) name, each once."""
    data_basedir = Path(os.path.abspath(data_basedir))
    links = [os.path.realpath(r) for r in validate.extra_roots(registry, subset, raw_root)]
    task_folder = layout.task_dir(data_basedir, subset)
    confine = os.path.realpath(layout.subset_dir(data_basedir, subset))
    named = Named(subset)
    for task in subset.tasks:
        path = task_folder / task.file
        if not os.path.lexists(path):  # a FIFO or a link to nothing is named below, not passed over
            continue
        root = layout.task_image_root(data_basedir, task) or task_folder
        try:
            rows = validate.load_records(path, jsonl=False, inside=data_basedir)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            named.unreadable_files.append(f"{path.relative_to(data_basedir)}: {exc}")
            continue
        root_name, seen = root.relative_to(data_basedir).as_posix(), set()
        for index, row in rows:
            if records.task_record_problems(row, task.parser):
                named.bad_records += 1
                continue
            for ref in records.task_record_images(index, row, task.parser):
                if ref.path not in seen:  # records repeat their images
                    seen.add(ref.path)
                    job = _job(subset.key, str(data_basedir), root_name, ref.path, (confine, *links))
                    named.jobs.setdefault(job.path, job)
    if train:  # Train_Data paths are relative to DATA_BASEDIR; each file's paths of this subset (trainlist)
        allowed = (os.path.realpath(data_basedir), *links)
        for record in trainlist.records_for(data_basedir, registry, subset):
            for path_text in record.paths:
                job = _job(subset.key, str(data_basedir), ".", path_text, allowed)
                named.jobs.setdefault(job.path, job)
    return named


def _job(subset_key: str, data_basedir: str, root_name: str, path_text: str, allowed: tuple[str, ...]) -> Job:
    """The image a record names, relative to DATA_BASEDIR (`root_name`: its image root, '.' for Train_Data)."""
    try:
        safe_relative(path_text, "image path")
    except UnsafePathError:
        shown = clipped(path_text) if root_name == "." else f"{root_name}/{clipped(path_text)}"
        return Job(subset_key, shown, "", allowed)
    name = posixpath.normpath(f"{root_name}/{path_text}")  # stays below the root: safe_relative checked it
    return Job(subset_key, name, f"{data_basedir}/{name}", allowed)


# --- writing -----------------------------------------------------------------------------------------
def attest(
    registry: Registry,
    subsets,
    data_basedir: Path,
    out: Path,
    *,
    raw_root: Path | None = None,
    settings=None,
    workers: int = 1,
    log: Callable[[str], None] = print,
    progress_interval: float = 10.0,
    bar_stream=None,
    shard: tuple[int, int] | None = None,
) -> Attestation:
    """Fingerprint every image the built `subsets` name; write the file `out` atomically. The entries go to a
    temporary file as they are decoded (no pixels and no entries are held), then behind the header. `shard`
    (i, n): only the images at positions i, i + n, ... of the sorted list, one job of n (the workflow's
    attest_shard); fingerprintfile.merge of the n files is the file of all of them."""
    from preprocess.convert.progress import Progress

    chosen = built_subsets(registry, subsets, data_basedir)
    named = [
        named_images(registry, s, data_basedir, raw_root, splits.wanted(settings, s) == splits.ALL) for s in chosen
    ]
    for one in named:
        for problem in one.unreadable_files:
            log(f"warning: {one.subset.key}: task file left out, it cannot be read: {problem}")
        if one.bad_records:
            log(f"warning: {one.subset.key}: {one.bad_records} records left out: they do not match the task schema")
    jobs = [job for one in named for _, job in sorted(one.jobs.items())]
    if shard is not None:
        jobs = jobs[shard[0] :: shard[1]]
        log(f"attest: shard {shard[0]} of {shard[1]}")
    log(f"attest: {len(jobs):,} images of {len(chosen)} built subsets, {workers} worker(s)")
    progress = Progress("attest", len(jobs), log=log, interval=progress_interval, bar_stream=bar_stream)
    found = write_entries(Path(out), _advancing(_fingerprint_all(jobs, workers), progress))
    progress.close()
    for status in (MISSING, UNDECODABLE, UNSAFE):
        if found.counts[status]:
            log(f"warning: {found.counts[status]} images {status} (listed as such in {out})")
    return found


def _advancing(entries: Iterable[Entry], progress) -> Iterator[Entry]:
    for entry in entries:
        yield entry
        progress.advance()


def _fingerprint_all(jobs: list[Job], workers: int) -> Iterator[Entry]:
    """The entries of `jobs`, in their order. With several workers, chunks go to a process pool with a bounded
    window of chunks in flight (memory stays constant); a worker that dies stops the run with an error instead
    of a wait (concurrent.futures raises BrokenProcessPool)."""
    if workers <= 1:
        yield from map(fingerprint_job, jobs)
        return
    chunks = (jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK))
    try:
        with ProcessPoolExecutor(max_workers=workers, initializer=let_ctrl_c_through) as pool:
            window: deque = deque()
            for chunk in chunks:
                with ctrl_c_held():  # a submit may fork a worker
                    window.append(pool.submit(_fingerprint_chunk, chunk))
                if len(window) >= 4 * workers:
                    yield from window.popleft().result()
            while window:
                yield from window.popleft().result()
    except BrokenProcessPool:
        raise PreprocessError(
            "attest: a worker process stopped without its results (killed, or out of memory); run again, with "
            "fewer --workers if memory ran out (nothing was written)"
        ) from None


def published_states(registry: Registry, fingerprints: Path | None) -> dict[str, str]:
    """For `status`: per subset whose registry entry publishes a fingerprint, whether the build's fingerprint
    file (written by the workflow) holds the same digest for it (None: no results folder, nothing attested)."""
    keys = [s for s in registry.subsets if s.fingerprint is not None]
    if not keys:
        return {}
    header = read_header(fingerprints) if fingerprints is not None and fingerprints.is_file() else None
    attested = header.subsets if header is not None else {}
    states = {}
    for subset in keys:
        if subset.key not in attested:
            where = fingerprints if fingerprints is not None else "a results folder (none given or found)"
            states[subset.key] = f"not attested (no entry in {where})"
        elif attested[subset.key] == subset.fingerprint:
            states[subset.key] = "matches published"
        else:
            states[subset.key] = "differs from published"
    return states
