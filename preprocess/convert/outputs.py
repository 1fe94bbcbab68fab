"""What a conversion kind yields, and the one place that writes it into DATA_BASEDIR.

A kind never writes a file itself. For each item of its plan it yields a `Result`: a label (the raw file or
row, for messages) and its outputs, produced lazily, so that bad input met while producing them belongs to
that item. An output is one of:
  Data(path, data)          bytes written as they are (a JPEG copied out of a parquet file)
  Png(path, pixels)         a uint8/uint16 array encoded as PNG
  HardLink(path, source)    a raw file placed by hard link (a copy across file systems)
  SymLink(path, target)     a symbolic link to a raw folder (the MIMIC-CXR links)
`write` puts one output in place atomically (a temporary name, then a rename), keeps a file that already
holds the same bytes, keeps a file with other bytes too (the release's own image: decoded and compared,
convert/compare.py) unless overwrite_existing, and returns its manifest row (path relative to DATA_BASEDIR,
kind, detail).

Nothing is written through a link out of DATA_BASEDIR. An output's name is checked as text (under
DATA_BASEDIR, no `..`), and its folder, resolved, must lie in the resolved DATA_BASEDIR (which is apart from
the raw root: rawroot.require_apart): a folder link inside DATA_BASEDIR that leads out of it (a subset's
folder linked into the raw root, a MIMIC-CXR link made by the symlink farm) stops the job with an error that
names the link. Each folder is resolved once per job, when it is first met (`ready_folder`), before anything
is looked at through it, and made just before the first write into it. The temporary file is created with
O_EXCL | O_NOFOLLOW and renamed over the name (a rename replaces a link at the name, it never writes through
it), and a link at the name is never taken as holding the bytes.
What this does not stop: a folder swapped for a link while the job runs, after it was checked, by someone
who may write into DATA_BASEDIR. Links made before the run, by anyone, are caught.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocess.convert import compare
from preprocess.errors import OutputConflictError, OutputWriteError, RawDataError
from preprocess.formats import noreplace
from preprocess.formats.fsutil import atomic_write_bytes, file_digest, file_type, same_bytes
from preprocess.formats.partnames import PART_MARK, is_part_name
from preprocess.formats.pngio import encode_png
from preprocess.formats.rawroot import link_out, link_out_message

Row = tuple[str, str, str]  # (path relative to DATA_BASEDIR, kind, detail)

# Temporary names carry the tag of the job that writes them (set by the job that holds the shard's lock), so
# a rerun of that shard after a kill can tell its own leftovers from another shard's files in progress:
# `.<name>.medheb-<tag>.part`, hidden and marked as the pipeline's, so that no file of anyone else's matches.
_PART = {"tag": None, "suffix": None}  # the suffix made of the tag once, not per file
# Where this build's own file goes when a file in place differs from it (layout.OURS of the job's results
# folder; None: nowhere), for the report to show both: set by the job, like the tag.
_OURS = {"folder": None}


def set_ours_folder(folder: Path | None) -> None:
    _OURS["folder"] = folder


def _keep_ours(relative: str, judged: str, data: bytes) -> None:
    """Our bytes of a file that differs from the one in place, under the results folder (never DATA_BASEDIR)."""
    if _OURS["folder"] is not None and judged.startswith(compare.DIFFERS):
        atomic_write_bytes(Path(_OURS["folder"]) / relative, data)


def set_part_tag(tag: str) -> None:
    """Start a job: its temporary names carry `tag`, and every folder is checked again when first met."""
    _PART["tag"] = tag
    _PART["suffix"] = f".{PART_MARK}{tag}.part"
    _CHECKED.clear()
    _READY.clear()
    _MADE.clear()


def part_suffix() -> str:
    return _PART["suffix"] or f".{PART_MARK}{os.getpid()}.part"


def remove_parts(folder: Path, tag: str) -> list[Path]:
    """Delete the temporary files that a killed run of the job `tag` left under `folder`; return them. Only
    regular files named as this job names its own (`.<name>.medheb-<tag>.part`): a user's `x.<tag>.part`, a
    link or a folder of that name, another job's temporaries are never touched."""
    found = []
    for root, _, names in os.walk(folder):
        for name in names:
            if is_part_name(name, tag) and stat.S_ISREG(os.lstat(os.path.join(root, name)).st_mode):
                found.append(Path(root, name))
    for path in found:
        path.unlink(missing_ok=True)
    return found


@dataclass(slots=True)
class Data:
    path: Path | str
    data: bytes
    kind: str = "file"  # the manifest's kind: "labels" for a table that is not an image


@dataclass(slots=True)
class Png:
    path: Path
    pixels: np.ndarray


@dataclass(slots=True)
class HardLink:
    path: Path
    source: Path
    detail: str | None = None  # size:sha256 when the caller knows it (a file it has just written)


@dataclass(slots=True)
class SymLink:
    path: Path
    target: Path


@dataclass(slots=True)
class Result:
    """One planned item: its label, its outputs (an iterable evaluated when the item is written) and the raw
    files they are made from beyond those the registry names by path (an image, a volume): a resumed run
    converts the item again when one of them has another size or mtime (preprocess/convert/journal.py)."""

    label: str
    outputs: Iterable
    reads: tuple = ()


def write(output, data_basedir: Path, overwrite: bool) -> Row:
    if isinstance(output, Data):  # the most frequent first: every MedMNIST image is one
        row = write_bytes(output.path, output.data, data_basedir, overwrite)
        return row if output.kind == "file" or row[1] != "file" else (row[0], output.kind, row[2])
    if isinstance(output, Png):
        pixels = np.ascontiguousarray(output.pixels)
        return write_bytes(output.path, encode_png(pixels), data_basedir, overwrite, pixels)
    if isinstance(output, HardLink):
        return place_file(output, data_basedir, overwrite)
    return place_symlink(output, data_basedir)


@functools.lru_cache(maxsize=8)
def _prefix(data_basedir: Path | str) -> str:
    return os.fspath(data_basedir).rstrip(os.sep) + os.sep


def _relative(path: Path | str, data_basedir: Path) -> str:
    text, base = os.fspath(path), _prefix(data_basedir)
    relative = text[len(base) :]
    if not text.startswith(base) or f"{os.sep}..{os.sep}" in f"{os.sep}{relative}{os.sep}":
        raise OutputConflictError(f"{text} would land outside DATA_BASEDIR {data_basedir}")
    return relative


# Folders of DATA_BASEDIR met in this job: folder text -> DATA_BASEDIR text, in _CHECKED once resolved inside
# DATA_BASEDIR, in _READY once made as well, in _MADE when this job made it (it was not there when first met).
# Plain dicts, looked up once per output; cleared when a job starts (set_part_tag), or when one grows large
# (forgetting a folder only costs a second check, or the look at a name in a folder this job made).
_CHECKED: dict[str, str] = {}
_READY: dict[str, str] = {}
_MADE: dict[str, str] = {}
_REMEMBERED = 1 << 16


def ready_folder(folder: str, data_basedir: Path | str, make: bool = True) -> None:
    """Check that `folder` (text, under DATA_BASEDIR) resolves inside the resolved DATA_BASEDIR, else
    OutputConflictError naming the link that leads out; then make it when `make` and it does not exist. Once
    per folder and job."""
    base = _prefix(data_basedir)
    if _READY.get(folder) == base:
        return
    if _CHECKED.get(folder) != base:
        require_inside(folder, data_basedir)
        _remember(_CHECKED, folder, base)
    if make:
        existed = os.path.isdir(folder)
        try:
            os.makedirs(folder, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise OutputConflictError(_not_a_folder(folder)) from None
        except OSError as exc:
            raise write_error(folder, exc) from None
        _remember(_READY, folder, base)
        if not existed:
            _remember(_MADE, folder, base)


def _not_a_folder(folder: str) -> str:
    """What stands in the way of making `folder`: the first name on its way that is there but is no folder."""
    blocking = Path(folder)
    for above in [blocking, *blocking.parents]:
        if os.path.lexists(above) and not os.path.isdir(above):
            blocking = above
            break
    what = in_place(blocking, os.lstat(blocking)) if os.path.lexists(blocking) else "something"
    return (
        f"{blocking} is {what} where a folder of this build belongs ({folder}); the pipeline never removes it: "
        "move it away, then run again"
    )


def _remember(folders: dict[str, str], folder: str, base: str) -> None:
    if len(folders) >= _REMEMBERED:
        folders.clear()
    folders[folder] = base


def require_inside(folder: Path | str, data_basedir: Path | str) -> None:
    """OutputConflictError naming the link when `folder` (under DATA_BASEDIR) resolves outside it."""
    escape = link_out(data_basedir, folder)
    if escape is not None:
        raise OutputConflictError(link_out_message(*escape, data_basedir))


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def write_bytes(target: Path | str, data: bytes, data_basedir: Path, overwrite: bool, pixels=None) -> Row:
    """Write bytes atomically unless the file already holds them.

    Plain os calls on text paths: this runs once per output image (millions for a full build). The folder is
    checked and made once per job (ready_folder). In a folder this job made, the bytes go straight to a new
    temporary file, renamed to the name only if nothing is there (noreplace: one system call, no look first);
    when the name is taken after all, or this file system cannot tell, the temporary file goes and the name
    is looked at as in every other folder. There the name is looked at first (a file that holds the bytes is
    not written again; a file with other bytes is compared and kept, convert/compare.py; a link or a folder
    is refused; either is replaced under `overwrite`), then the bytes go to a new temporary file that is
    renamed to the name. `pixels`: what `data` encodes, for the comparison.
    """
    path = os.fspath(target)
    relative = _relative(path, data_basedir)
    folder, name = os.path.split(path)
    ready_folder(folder, data_basedir)
    detail = f"{len(data)}:{hashlib.sha256(data).hexdigest()}"
    tmp = f"{folder}/.{name}{part_suffix()}"
    if _MADE.get(folder) is not None and noreplace.available():
        _write_temporary(tmp, data, path)
        if _move(tmp, path, noreplace.rename):
            return relative, "file", detail
        os.unlink(tmp)  # the name is taken (or cannot be told): looked at below, as in any folder
    held = _holds(path, data, overwrite)
    if held is True:
        return relative, "file", detail
    if held == OTHER_FILE:
        judged = compare.verdict(path, pixels if pixels is not None else data)
        _keep_ours(relative, judged, data)
        return relative, compare.KEPT, compare.kept_detail(path, judged)
    if isinstance(held, NotAFile):
        return _kept_unread(relative, held, data)
    _write_temporary(tmp, data, path)
    _move(tmp, path, os.rename)
    return relative, "file", detail


def _write_temporary(tmp: str, data: bytes, path: str) -> None:
    """A new file `tmp` holding `data` (never through a link: O_EXCL | O_NOFOLLOW); a failure is named by the
    output `path`, and leaves no temporary file."""
    try:
        try:
            descriptor = os.open(tmp, _NEW_FILE, 0o666)
        except FileExistsError:  # a leftover of a killed process that had this pid (a job's own are removed)
            os.unlink(tmp)
            descriptor = os.open(tmp, _NEW_FILE, 0o666)
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        try:
            written = os.write(descriptor, data)  # all of a small file at once; the rest, if any, in a loop
            if written < len(data):
                view = memoryview(data)[written:]
                while view:
                    view = view[os.write(descriptor, view) :]
        finally:
            os.close(descriptor)
    except BaseException as exc:
        _discard(tmp, path, exc)


def _move(tmp: str, path: str, rename):
    """`rename(tmp, path)` (os.rename, or noreplace.rename) and what it returns; on a failure the temporary
    file goes and the error is named by the output `path`."""
    try:
        return rename(tmp, path)
    except BaseException as exc:
        _discard(tmp, path, exc)


def _discard(tmp: str, path: str, exc: BaseException):
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    if isinstance(exc, OSError):
        raise write_error(path, exc) from None
    raise exc


OTHER_FILE = "other file"  # _holds: a regular file with other bytes, to compare and keep


@dataclass(frozen=True, slots=True)
class NotAFile:
    """_holds: no regular file at an output's name but something else (`what`: a link and its target, a folder,
    a FIFO...), kept as it is and reported as the manifest's row of that output: one such name (the release's
    damaged file, say) never stops the job nor the run, the validation names it and the run fails at its end."""

    what: str
    overwrite: bool


def _holds(path: str, data: bytes, overwrite: bool):
    """Does the file at path hold exactly data (True)? Absent: False. A regular file with other bytes:
    OTHER_FILE, or False under overwrite (it is replaced, saying so). Anything else: NotAFile, or False under
    overwrite when it is not a folder (a link is replaced, never written through)."""
    if not os.access(path, os.F_OK, follow_symlinks=False):  # the common case, a fresh name, without the
        return False  # cost of a raised exception
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISREG(info.st_mode):
        if info.st_size == len(data) and _read_bytes(path) == data:
            return True
        if not overwrite:
            return OTHER_FILE
        _replacing(path, "other content")
        return False
    return _not_a_file(path, info, overwrite)


def _not_a_file(path, info: os.stat_result, overwrite: bool) -> NotAFile | bool:
    what = in_place(path, info)
    if overwrite and not stat.S_ISDIR(info.st_mode):
        _replacing(path, what)
        return False
    return NotAFile(what, overwrite)


def in_place(path, info: os.stat_result) -> str:
    """What stands at an output's name that is not a regular file, in words (a link says where it points)."""
    if stat.S_ISLNK(info.st_mode):
        return f"a symbolic link to {os.readlink(path)}"
    return file_type(info.st_mode)


def _kept_unread(relative: str, held: NotAFile, ours: bytes) -> Row:
    judged = compare.not_a_file(held.what, held.overwrite)
    _keep_ours(relative, judged, ours)
    return relative, compare.KEPT, compare.not_a_file_detail(judged)


_FULL = (errno.ENOSPC, errno.EDQUOT)
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def write_error(path, exc: OSError) -> OutputWriteError:
    """A failed write named by its output (not its temporary name), with what to do: it stops the job (no raw
    item is at fault, and skipping would lose every item after it)."""
    if exc.errno in _FULL:
        advice = "the disk holding DATA_BASEDIR is full: free space there, then run again"
    elif exc.errno in _READ_ONLY:
        advice = "DATA_BASEDIR (or this folder of it) is read-only: make it writable, then run again"
    else:
        advice = "check the disk holding DATA_BASEDIR, then run again"
    return OutputWriteError(f"cannot write {path} ({exc.strerror or exc}); {advice} (finished files are kept)")


def _replacing(path, what: str) -> None:
    print(f"replacing {path}: it held {what} (overwrite_existing: true)")


def _read_bytes(path: str) -> bytes:
    with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as handle:
        return handle.read()


def place_file(output: HardLink, data_basedir: Path, overwrite: bool) -> Row:
    """Hard-link (same file system) or copy a raw file into place, atomically."""
    target, source = output.path, output.source
    relative = _relative(target, data_basedir)
    folder = os.path.dirname(target)
    ready_folder(folder, data_basedir, make=False)  # before anything is looked at through it
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        held = _not_a_file(target, info, overwrite)
        if held:
            return _kept_unread(relative, held, source.read_bytes())
    elif info is not None:
        if _holds_same_file(target, source):
            return relative, "file", output.detail or _detail(target)
        if not overwrite:  # compared and kept
            ours = source.read_bytes()
            judged = compare.verdict(os.fspath(target), ours)
            _keep_ours(relative, judged, ours)
            return relative, compare.KEPT, compare.kept_detail(os.fspath(target), judged)
        _replacing(target, "other content")
    # The detail from the source, before anything is linked: a raw file that cannot be read is the item's bad
    # input (named by its own path), and leaves no link behind in DATA_BASEDIR.
    detail = output.detail or _detail(source)
    tmp = target.with_name(f".{target.name}{part_suffix()}")
    ready_folder(folder, data_basedir)
    try:
        tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise write_error(target, exc) from None
    try:
        try:
            os.link(source, tmp)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK):
                raise
            shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    except FileNotFoundError as exc:
        tmp.unlink(missing_ok=True)
        raise RawDataError(f"raw file vanished while placing it: {source}") from exc
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and not _reading(exc, source):
            raise write_error(target, exc) from None
        raise  # reading the raw file failed: bad input of this item
    return relative, "file", detail


def _reading(exc: OSError, source: Path) -> bool:
    """Did opening or reading the raw file fail (not linking or writing)? os.link names both paths."""
    named = exc.filename is not None and os.fspath(exc.filename) == os.fspath(source)
    return named and exc.errno not in _FULL and exc.filename2 is None


def _holds_same_file(target: Path, source: Path) -> bool:
    if target.is_symlink() or not target.is_file():
        return False
    return os.path.samefile(target, source) or same_bytes(target, source)


def _detail(path: Path) -> str:
    return f"{path.stat().st_size}:{file_digest(path, 'sha256')}"


def place_symlink(output: SymLink, data_basedir: Path) -> Row:
    """Create link -> target, keep it if it already points there, refuse to replace anything else. The link
    may point out of DATA_BASEDIR (the MIMIC-CXR links into the raw root are the product); its folder may not."""
    link, target = output.path, output.target
    relative = _relative(link, data_basedir)
    folder = os.path.dirname(link)
    ready_folder(folder, data_basedir, make=False)
    if not target.exists():
        raise RawDataError(f"link target {target} does not exist; check the raw download")
    if link.is_symlink():
        if Path(os.readlink(link)) == target:
            return relative, "symlink", str(target)
        raise OutputConflictError(
            f"{link} is a link to {os.readlink(link)}, not to {target}; remove that link yourself "
            "if it is stale (the pipeline never deletes what it did not create)"
        )
    if link.exists():
        raise OutputConflictError(
            f"{link} is a real {'folder' if link.is_dir() else 'file'} where a link to {target} belongs; "
            "move it away (the pipeline never deletes it)"
        )
    tmp = link.with_name(f".{link.name}.{os.getpid()}.link")
    ready_folder(folder, data_basedir)
    try:
        tmp.unlink(missing_ok=True)
        os.symlink(target, tmp)
        os.replace(tmp, link)
    except OSError as exc:
        raise write_error(link, exc) from None
    return relative, "symlink", str(target)
