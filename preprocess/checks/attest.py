"""Pixel fingerprints of a built tree (`python -m preprocess attest`): what a lab publishes to show that its
images are the authors' images, and the comparison of two such files.

What is listed: every image path that a registered task JSON of a built subset names (its parser's image
fields, joined to the task's image root as the evaluation joins them) and, when the subset's train split is
built (`splits: all`), every path of its Train_Data JSON Lines (relative to DATA_BASEDIR). A subset is built
when its task files and its image root exist; text subsets have no images and are not listed. A path named by
several records or task files of a subset is listed once; a path two subsets name is listed under each.

The file (FORMAT), one line per image, tab-separated, sorted by subset then path:

    subset  path  status  mode  dtype  shape  sha256

- path: relative to DATA_BASEDIR, normalised ('a/./b' is 'a/b'), as named: a link is not followed in the name.
  A backslash, tab, newline and carriage return in a name are written \\\\, \\t, \\n, \\r; a lone surrogate (no
  UTF-8 for it: a task file's JSON escape) as \\udxxx. Each reads back as the character written.
- status: ok; missing (no file, or a broken link); undecodable (Pillow cannot decode it, or not a regular
  file); unsafe (the path climbs out of its root, is absolute, or a link leads outside the allowed folders).
- mode: Pillow's mode of the decoded image (L, RGB, I;16, ...); dtype and shape: the NumPy array of its
  pixels (uint8, 512x512x3).
- sha256 (status ok): SHA-256 of the ASCII text "<mode> <dtype> <shape>\\n" followed by the pixel array's
  bytes, row-major, multi-byte samples little-endian. A palette image (P, PA) is hashed as the RGB(A) colours
  it shows, its mode staying P or PA. Only pixels count: the encoder, its compression level, metadata chunks
  and ICC profiles do not. Status undecodable: SHA-256 of the file's bytes ('-' when it cannot be read).
  Otherwise '-'.

Digests: a subset's digest is the SHA-256 of its lines (each ending in a newline, in the file's order); the
tree digest that of every image line. Both can be checked with standard tools (see the README). The header
(lines starting with '#', then the column names) holds the digests, the counts and the versions of the
libraries that decoded the images; the versions are not digested.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import heapq
import os
import posixpath
import re
import select
import stat
import sys
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from preprocess.checks import validate
from preprocess.convert.forks import ctrl_c_held, let_ctrl_c_through
from preprocess.errors import PreprocessError, UnsafePathError
from preprocess.formats.fsutil import atomic_write_with, clipped, file_digest, safe_relative
from preprocess.formats.imagecheck import (
    Image,  # Pillow, with the package's pixel limit set (a decompression bomb is refused)
)
from preprocess.registry import layout, records, splits, trainlist
from preprocess.registry.model import Registry, Subset

FORMAT = "# MedHEB-Bench pixel fingerprints, format 1"
COLUMNS = ("subset", "path", "status", "mode", "dtype", "shape", "sha256")
OK, MISSING, UNDECODABLE, UNSAFE = "ok", "missing", "undecodable", "unsafe"
STATUSES = (OK, MISSING, UNDECODABLE, UNSAFE)
PRESENT = (OK, UNDECODABLE)  # a file is there; missing and unsafe paths hold no image of this tree
NONE = "-"
CHUNK = 32  # paths a worker takes at a time
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_ESCAPE_TABLE = str.maketrans(_ESCAPES)
# A name from JSON may hold a lone surrogate (no file can have it: it is listed as missing): written as \udxxx
ENCODING_ERRORS = "backslashreplace"


class FingerprintFileError(PreprocessError):
    """A fingerprint file that this module did not write, or that was cut or edited."""


@dataclass(frozen=True)
class Entry:
    subset: str
    path: str
    status: str
    mode: str = NONE
    dtype: str = NONE
    shape: str = NONE
    sha256: str = NONE

    @property
    def key(self) -> tuple[str, str]:
        return self.subset, self.path

    @property
    def present(self) -> bool:
        return self.status in PRESENT

    def line(self) -> str:
        return "\t".join(_escape(value) for value in (self.subset, self.path, self.status, *self.pixels()))

    def pixels(self) -> tuple[str, str, str, str]:
        return self.mode, self.dtype, self.shape, self.sha256

    def describe(self) -> str:
        if self.status == OK:
            return f"{self.mode} {self.dtype} {self.shape} {self.sha256[:12]}"
        return self.status + (f" (file {self.sha256[:12]})" if self.sha256 != NONE else "")


def _escape(text: str) -> str:
    """A name from a task file may hold a tab or a newline: written escaped, so a line stays one entry."""
    return text.translate(_ESCAPE_TABLE)


_UNESCAPES = {value[1]: key for key, value in _ESCAPES.items()}
# what `_escape` and the ENCODING_ERRORS of the writer put after a backslash: one of _ESCAPES, or the code of a
# lone surrogate (the only characters UTF-8 cannot encode), as backslashreplace writes it
_ESCAPED = re.compile(r"\\(?:([\\tnr])|u(d[89a-f][0-9a-f]{2}))")


def _unescape(text: str) -> str:
    """The text `_escape` and the writer's encoding were given: every escape they write reads back exactly."""
    if "\\" not in text:
        return text
    return _ESCAPED.sub(lambda m: _UNESCAPES[m[1]] if m[1] else chr(int(m[2], 16)), text)


# --- decoding (runs in the worker processes) -------------------------------------------------------------

# Modes whose raw bytes (Image.tobytes) are the NumPy array's bytes: (dtype, bands). Other modes go through
# NumPy (a bilevel "1" image is packed in its raw bytes, a float one is in the machine's byte order).
_RAW_MODES = {"L": ("uint8", 1), "LA": ("uint8", 2), "RGB": ("uint8", 3), "RGBA": ("uint8", 4), "I;16": ("uint16", 1)}


def decoder_versions() -> str:
    import numpy
    import PIL

    return f"Pillow {PIL.__version__}, numpy {numpy.__version__}"


def pixel_fingerprint(path: str) -> tuple[str, str, str, str]:
    """(mode, dtype, shape, sha256) of the decoded image; raises OSError or ValueError when it does not decode."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        with Image.open(path) as image:
            image.load()
            mode = image.mode
            if mode in ("P", "PA"):  # the indices mean nothing without the palette: hash the colours shown
                image = image.convert("RGBA" if mode == "PA" or "transparency" in image.info else "RGB")
            if image.mode in _RAW_MODES:
                dtype, bands = _RAW_MODES[image.mode]
                shape = (image.height, image.width) + ((bands,) if bands > 1 else ())
                data = image.tobytes()
            else:
                pixels = np.ascontiguousarray(np.asarray(image))
                if pixels.dtype.byteorder == ">" or (pixels.dtype.byteorder == "=" and sys.byteorder == "big"):
                    pixels = pixels.astype(pixels.dtype.newbyteorder("<"))
                dtype, shape, data = pixels.dtype.name, pixels.shape, memoryview(pixels).cast("B")
    shape_text = "x".join(str(n) for n in shape)
    digest = hashlib.sha256(f"{mode} {dtype} {shape_text}\n".encode("ascii"))
    digest.update(data)
    return mode, dtype, shape_text, digest.hexdigest()


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


@dataclass
class Attestation:
    """What one run of attest wrote: the digests and counts of the file's header."""

    tree: str
    subsets: dict[str, tuple[str, int]]  # key -> (digest, images)
    counts: dict[str, int]  # status -> images
    decoder: str


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
) -> Attestation:
    """Fingerprint every image the built `subsets` name; write the file `out` atomically. The entries go to a
    temporary file as they are decoded (no pixels and no entries are held), then behind the header."""
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


def write_entries(out: Path, entries: Iterable[Entry]) -> Attestation:
    """Write the fingerprint file `out` atomically from entries in (subset, path) order: they go to a temporary
    file as they come (none is held), then behind the header that their digests make."""
    out.parent.mkdir(parents=True, exist_ok=True)
    body = out.with_name(f".{out.name}.body.part")
    tree, digests, counts = hashlib.sha256(), {}, dict.fromkeys(STATUSES, 0)
    try:
        with open(body, "wb") as handle:
            for entry in entries:
                line = (entry.line() + "\n").encode("utf-8", ENCODING_ERRORS)
                if entry.subset not in digests:
                    digests[entry.subset] = [hashlib.sha256(), 0]
                digests[entry.subset][0].update(line)
                digests[entry.subset][1] += 1
                tree.update(line)
                counts[entry.status] += 1
                handle.write(line)
        found = Attestation(
            tree.hexdigest(), {k: (d.hexdigest(), n) for k, (d, n) in digests.items()}, counts, decoder_versions()
        )
        _write_with_header(out, body, found)
    finally:
        body.unlink(missing_ok=True)
    return found


def merge(files: Iterable[Path], out: Path) -> Attestation:
    """One fingerprint file from several, each of other subsets (the workflow's per-subset files): their
    entries in (subset, path) order, the digests computed anew over them."""
    streams = [read_entries(Path(path)) for path in files]
    return write_entries(Path(out), heapq.merge(*streams, key=lambda entry: entry.key))


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


def _write_with_header(out: Path, body: Path, found: Attestation) -> None:
    """The header, then the body's lines, written atomically with the umask's permissions, as every other result
    (the fingerprints are meant to be published)."""
    import shutil

    def write(handle) -> None:
        handle.write(header_text(found).encode("utf-8", ENCODING_ERRORS))
        with open(body, "rb") as lines:
            shutil.copyfileobj(lines, handle)

    atomic_write_with(out, write)


def header_text(found: Attestation) -> str:
    images = sum(n for _, n in found.subsets.values())
    lines = [
        FORMAT + " (written by `python -m preprocess attest`; preprocess/checks/attest.py documents it)",
        '# sha256 of an image: "<mode> <dtype> <shape>\\n" then its decoded pixels, row-major, little-endian',
        "# a subset's digest: sha256 of its lines; the tree's: sha256 of every line below the column names",
        f"# decoder\t{found.decoder}",
        f"# tree\t{found.tree}\t{images}",
        *(f"# subset\t{key}\t{digest}\t{count}" for key, (digest, count) in sorted(found.subsets.items())),
        "\t".join(COLUMNS),
    ]
    return "\n".join(lines) + "\n"


# --- reading -----------------------------------------------------------------------------------------


@dataclass
class Header:
    tree: str
    subsets: dict[str, str]  # key -> digest
    decoder: str
    images: dict[str, int] = field(default_factory=dict)  # key -> images listed


def read_header(path: Path) -> Header:
    """The digests a fingerprint file's header holds (for the report and `status`: no entry is read)."""
    with opened(path) as (header, _):
        return header


def read_entries(path: Path) -> Iterator[Entry]:
    """The entries of a fingerprint file, one at a time, checked for their form and their order."""
    with opened(path) as (_, entries):
        yield from entries


@contextlib.contextmanager
def opened(path: Path) -> Iterator[tuple[Header, Iterator[Entry]]]:
    """A fingerprint file opened once and read front to back: its header, then its entries as they are read
    (a pipe can be read only once)."""
    with _open(path) as handle:
        header, header_lines = _header(path, handle)
        yield header, _entries(path, handle, header_lines)


def _entries(path: Path, handle, header_lines: int) -> Iterator[Entry]:
    previous = None
    for number, raw in enumerate(handle, start=header_lines + 1):
        fields = raw.rstrip("\n").split("\t")
        if len(fields) != len(COLUMNS) or fields[2] not in STATUSES:
            raise FingerprintFileError(
                f"{path}, line {number}: expected {len(COLUMNS)} tab-separated fields ({', '.join(COLUMNS)}) "
                f"with a status of {', '.join(STATUSES)}; the file was cut or edited: write it again with attest"
            )
        entry = Entry(*(_unescape(value) for value in fields))
        if previous is not None and entry.key <= previous:
            raise FingerprintFileError(
                f"{path}, line {number}: {entry.subset} {entry.path} is out of order (the file is sorted by "
                "subset and path); write it again with attest"
            )
        previous = entry.key
        yield entry


# How long a named pipe (FIFO) may stay without a writer: opening one blocks until a program opens it to write,
# forever if none does. A pipe this process holds (standard input, `<(command)`) has its writer already.
FIFO_WAIT = 60.0  # seconds
_HELD = re.compile(r"-|/dev/stdin|/dev/fd/(\d+)|/proc/self/fd/(\d+)")


def _open(path: Path):
    """The file as one text stream, opened once. `-`, /dev/stdin and /dev/fd/N (what `<(command)` passes)
    are read from the descriptor this process holds, for as long as their writer takes; a named pipe waits
    at most FIFO_WAIT seconds for its first bytes."""
    try:
        fd = _held_descriptor(path)
        if fd is None:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a named pipe without a writer does not block here
            try:
                kind = os.fstat(fd).st_mode
                if stat.S_ISDIR(kind):
                    raise FingerprintFileError(f"{path} is a folder, not a fingerprint file")
                if stat.S_ISFIFO(kind):
                    _wait_for_writer(path, fd)
                os.set_blocking(fd, True)
            except BaseException:
                os.close(fd)
                raise
        return open(fd, encoding="utf-8", errors="surrogateescape", newline="\n")
    except OSError as exc:
        raise FingerprintFileError(f"cannot read fingerprint file {path}: {exc.strerror or exc}") from None


def _held_descriptor(path: Path) -> int | None:
    """A copy of the descriptor `path` names in this process (standard input, /dev/fd/N), or None."""
    match = _HELD.fullmatch(os.fspath(path))
    return None if match is None else os.dup(int(match[1] or match[2] or 0))


def _wait_for_writer(path: Path, fd: int) -> None:
    readable, _, _ = select.select([fd], [], [], FIFO_WAIT)
    if not readable:
        raise FingerprintFileError(
            f"{path} is a named pipe (FIFO) that no program wrote to in {FIFO_WAIT:g} s: start the program that "
            "writes it before attest, or give the file itself, `-` (standard input) or <(command)"
        )


def _header(path: Path, handle) -> tuple[Header, int]:
    first = handle.readline()
    if not first.startswith(FORMAT):
        raise FingerprintFileError(
            f"{path} is not a fingerprint file of this format (its first line should start with {FORMAT!r}); "
            "write one with `python -m preprocess attest DATA_BASEDIR --out FILE`"
        )
    header = Header("", {}, "")
    number = 1
    for number, raw in enumerate(handle, start=2):
        fields = raw.rstrip("\n").split("\t")
        if fields[0] == "# decoder" and len(fields) == 2:
            header.decoder = fields[1]
        elif fields[0] == "# tree" and len(fields) == 3:
            header.tree = fields[1]
        elif fields[0] == "# subset":
            if len(fields) != 4 or not (fields[3].isascii() and fields[3].isdigit()):
                raise FingerprintFileError(
                    f"{path}, line {number}: a subset line holds '# subset', the subset, its digest and its image "
                    "count (ASCII digits), tab-separated; the file was cut or edited: write it again with attest"
                )
            header.subsets[fields[1]] = fields[2]
            header.images[fields[1]] = int(fields[3])
        elif tuple(fields) == COLUMNS:
            return header, number
        elif not raw.startswith("#"):
            break
    raise FingerprintFileError(f"{path}: no column names ({' '.join(COLUMNS)}) after the header: the file was cut")


# --- comparing ---------------------------------------------------------------------------------------

EQUAL, DIFFERENT, ONLY_THEIRS, ONLY_MINE = "equal", "different", "only_theirs", "only_mine"


@dataclass
class SubsetComparison:
    subset: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys((EQUAL, DIFFERENT, ONLY_THEIRS, ONLY_MINE), 0))
    paths: dict[str, list[dict]] = field(default_factory=lambda: {DIFFERENT: [], ONLY_THEIRS: [], ONLY_MINE: []})

    @property
    def verdict(self) -> str:
        if not any(self.counts[k] for k in (DIFFERENT, ONLY_THEIRS, ONLY_MINE)):
            return "equal"
        if not self.counts[EQUAL] and not self.counts[DIFFERENT]:
            if not self.counts[ONLY_MINE]:
                return "only in theirs"
            if not self.counts[ONLY_THEIRS]:
                return "only in mine"
        return "different"


def compare(theirs: Path, mine: Path) -> tuple[list[SubsetComparison], tuple[Header, Header]]:
    """Per subset, the images equal on both sides, different, and present on one side only (a path missing
    or unsafe on one side counts as absent there). Both files are read side by side, in their sorted order."""
    found: dict[str, SubsetComparison] = {}

    def note(kind: str, their: Entry | None, my: Entry | None) -> None:
        entry = their or my
        one = found.setdefault(entry.subset, SubsetComparison(entry.subset))
        one.counts[kind] += 1
        if kind != EQUAL:
            one.paths[kind].append(
                {
                    "path": entry.path,
                    "theirs": their.describe() if their else "no entry",
                    "mine": my.describe() if my else "no entry",
                }
            )

    with opened(theirs) as (their_header, their_entries), opened(mine) as (my_header, my_entries):
        _walk(their_entries, my_entries, note)
    return [found[k] for k in sorted(found)], (their_header, my_header)


def _walk(their_entries: Iterator[Entry], my_entries: Iterator[Entry], note) -> None:
    """Both sorted files side by side: `note` each path as equal, different, or on one side only."""
    their, my = next(their_entries, None), next(my_entries, None)
    while their is not None or my is not None:
        if my is None or (their is not None and their.key < my.key):
            if their.present:
                note(ONLY_THEIRS, their, None)
            their = next(their_entries, None)
        elif their is None or my.key < their.key:
            if my.present:
                note(ONLY_MINE, None, my)
            my = next(my_entries, None)
        else:
            if their.present and not my.present:
                note(ONLY_THEIRS, their, my)
            elif my.present and not their.present:
                note(ONLY_MINE, their, my)
            else:
                note(EQUAL if (their.status, *their.pixels()) == (my.status, *my.pixels()) else DIFFERENT, their, my)
            their, my = next(their_entries, None), next(my_entries, None)


def differs(comparisons: list[SubsetComparison]) -> bool:
    return any(c.verdict != "equal" for c in comparisons)


def comparison_text(comparisons: list[SubsetComparison], headers: tuple[Header, Header], limit: int) -> str:
    from preprocess.formats import tables

    rows = [
        [c.subset, c.counts[EQUAL], c.counts[DIFFERENT], c.counts[ONLY_THEIRS], c.counts[ONLY_MINE], c.verdict]
        for c in comparisons
    ]
    text = tables.render(["subset", "equal", "different", "only in theirs", "only in mine", "verdict"], rows)
    labels = {DIFFERENT: "different pixels", ONLY_THEIRS: "only in theirs", ONLY_MINE: "only in mine"}
    for kind, label in labels.items():
        listed = [(c.subset, p) for c in comparisons for p in c.paths[kind]]
        if not listed:
            continue
        text += f"\n\n{label} ({len(listed)}):"
        for subset, p in listed[:limit]:
            text += f"\n  {subset}  {p['path']}  (theirs: {p['theirs']}; mine: {p['mine']})"
        if len(listed) > limit:
            text += f"\n  ... {len(listed) - limit} more (--json lists them all)"
    if headers[0].decoder != headers[1].decoder:
        text += (
            f"\n\nnote: decoded by different libraries (theirs: {headers[0].decoder}; mine: {headers[1].decoder}); "
            "JPEG decoders of other versions may give other pixels"
        )
    changed = sum(1 for c in comparisons if c.verdict != "equal")
    verdict = "the trees hold the same pixels" if not changed else f"{changed} of {len(comparisons)} subsets differ"
    return text + f"\n\n{verdict}"


def comparison_json(comparisons: list[SubsetComparison], headers: tuple[Header, Header]) -> dict:
    return {
        "equal": not differs(comparisons),
        "tree": {"theirs": headers[0].tree, "mine": headers[1].tree},
        "decoder": {"theirs": headers[0].decoder, "mine": headers[1].decoder},
        "subsets": [{"subset": c.subset, "verdict": c.verdict, "counts": c.counts, **c.paths} for c in comparisons],
    }


# --- published digests ---------------------------------------------------------------------------------


def front_digests(path: Path) -> dict:
    """The tree digest and each subset's digest and image count, as the build's front page shows them."""
    header = read_header(path)
    subsets = [{"subset": k, "digest": d, "images": header.images[k]} for k, d in sorted(header.subsets.items())]
    return {"file": str(path), "tree": header.tree, "decoder": header.decoder, "subsets": subsets}


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
