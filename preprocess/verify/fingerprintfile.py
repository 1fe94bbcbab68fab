"""The pixel fingerprint file (`python -m preprocess attest` writes it, attest.py lists what goes in it):
its lines, its header with the digests, and its reading, from a file or a pipe.

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
import hashlib
import heapq
import os
import re
import select
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from preprocess.errors import PreprocessError
from preprocess.formats.fsutil import atomic_write_with
from preprocess.verify.pixelhash import decoder_versions

FORMAT = "# MedHEB-Bench pixel fingerprints, format 1"
COLUMNS = ("subset", "path", "status", "mode", "dtype", "shape", "sha256")
OK, MISSING, UNDECODABLE, UNSAFE = "ok", "missing", "undecodable", "unsafe"
STATUSES = (OK, MISSING, UNDECODABLE, UNSAFE)
PRESENT = (OK, UNDECODABLE)  # a file is there; missing and unsafe paths hold no image of this tree
NONE = "-"
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


# --- writing -----------------------------------------------------------------------------------------


@dataclass
class Attestation:
    """What one run of attest wrote: the digests and counts of the file's header."""

    tree: str
    subsets: dict[str, tuple[str, int]]  # key -> (digest, images)
    counts: dict[str, int]  # status -> images
    decoder: str


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
        FORMAT + " (written by `python -m preprocess attest`; preprocess/verify/fingerprintfile.py documents it)",
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


# --- the digests the build's front page shows -------------------------------------------------------


def front_digests(path: Path) -> dict:
    """The tree digest and each subset's digest and image count, as the build's front page shows them."""
    header = read_header(path)
    subsets = [{"subset": k, "digest": d, "images": header.images[k]} for k, d in sorted(header.subsets.items())]
    return {"file": str(path), "tree": header.tree, "decoder": header.decoder, "subsets": subsets}
