"""File-system helpers: atomic writes, hashing, safe relative paths, files written inside a root without
following a link."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
import stat
from pathlib import Path, PurePosixPath

from preprocess.errors import UnsafePathError

_CHUNK = 1 << 20


def _temporary(path: Path) -> tuple[int, str]:
    """A new file beside `path`, created with the permissions the umask gives (mkstemp's are 0600: the
    evaluation configs and reports must be readable by the others a cluster's umask lets read them)."""
    while True:
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(4)}.part")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), tmp
        except FileExistsError:
            continue


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary name in the same folder, then rename: readers never see half a file."""
    atomic_write_with(path, lambda handle: handle.write(data))


def atomic_write_with(path: Path, write) -> None:
    """`write(handle)` into a temporary file beside `path` (opened "wb", with the umask's permissions), then
    rename it to `path`: for a file too large to hold as bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temporary(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):  # named by the file meant, not by its temporary name
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value) -> None:
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate read from a JSON escape: kept as an escape, the same value
        data = (json.dumps(value, indent=2, sort_keys=True) + "\n").encode("ascii")
    atomic_write_bytes(path, data)


def file_digest(path: Path, algorithm: str = "md5") -> str:
    # hashlib's own loop reads into one reused buffer: no new bytes object per chunk (an image folder's
    # SHA-256 of 5 MB files, docs/benchmarks.md)
    with open_regular(path) as handle:
        return hashlib.file_digest(handle, algorithm).hexdigest()


def same_bytes(a: Path, b: Path) -> bool:
    if a.stat().st_size != b.stat().st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            chunk_a, chunk_b = fa.read(_CHUNK), fb.read(_CHUNK)
            if chunk_a != chunk_b:
                return False
            if not chunk_a:
                return True


NAME_MAX = 255  # bytes per path component on the usual Linux file systems
PATH_MAX = 4096  # bytes of a whole path the kernel takes, its final NUL included (a longer one: ENAMETOOLONG)
SHOWN = 80  # characters of a path a message quotes: a record may hold a path of a megabyte


def shown(path_text) -> str:
    """A path as a message quotes it: repr'd, only its first SHOWN characters when it is longer ('...' added)."""
    if not isinstance(path_text, str):
        quoted = repr(path_text)
        return quoted if len(quoted) <= SHOWN else f"{quoted[:SHOWN]}..."
    return repr(path_text) if len(path_text) <= SHOWN else f"{path_text[:SHOWN]!r}..."


def clipped(path_text: str) -> str:
    """A path as a report keeps it: whole, unless it is longer than any path can be (then it names no file,
    and its first SHOWN characters say which it was)."""
    return path_text if len(path_text) < PATH_MAX else f"{path_text[:SHOWN]}..."


def _sizes(name: str) -> list[int]:
    """The bytes of each component of a relative path (as a file system counts them)."""
    return [len(part.encode("utf-8", "surrogateescape")) for part in name.split("/")]


def _whole_problem(sizes: list[int]) -> str | None:
    """Why a path of components of these sizes is longer than PATH_MAX allows (with its NUL), or None."""
    whole = sum(sizes) + len(sizes) - 1
    return f"is {whole:,} bytes long (a path holds at most {PATH_MAX - 1:,})" if whole >= PATH_MAX else None


def name_problem(name: str) -> str | None:
    """Why a relative output name built from raw data cannot be used as it is, or None."""
    if "\0" in name:
        return "holds a NUL character"
    if "\\" in name:
        return "holds a backslash (names use '/')"
    if name.startswith("/"):
        return "is absolute"
    if ".." in name.split("/"):
        return "climbs out with '..'"
    sizes = _sizes(name)
    if max(sizes) > NAME_MAX:
        return f"has a component of {max(sizes)} bytes (at most {NAME_MAX})"
    return _whole_problem(sizes)


def safe_relative(path_text: str, what: str) -> PurePosixPath:
    """A relative POSIX path that does not climb out of its folder and that a file system can open; raise
    UnsafePathError otherwise (quoting the path cut short: shown)."""
    if not isinstance(path_text, str) or not path_text:
        raise UnsafePathError(f"{what}: empty or non-text path {shown(path_text)}")
    if "\\" in path_text or "\0" in path_text:
        # the evaluation joins paths with os.path.join on POSIX: a backslash is part of a file name there
        raise UnsafePathError(f"{what}: path {shown(path_text)} holds a backslash or NUL (paths use '/')")
    try:  # a lone surrogate (a JSON "\\ud800" escape) is in no file name: opening it raises UnicodeEncodeError
        path_text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise UnsafePathError(f"{what}: path {shown(path_text)} holds a character no file name can hold") from None
    sizes = _sizes(path_text)
    if max(sizes) > NAME_MAX:
        raise UnsafePathError(f"{what}: path {path_text[:SHOWN]!r}... has a component longer than {NAME_MAX} bytes")
    too_long = _whole_problem(sizes)
    if too_long is not None:  # a megabyte of short parts: no file system opens it (ENAMETOOLONG)
        raise UnsafePathError(f"{what}: path {shown(path_text)} {too_long}")
    pure = PurePosixPath(path_text)
    if pure.is_absolute() or (pure.parts and pure.parts[0].endswith(":")):
        raise UnsafePathError(f"{what}: absolute path {shown(path_text)} is not allowed (paths are relative)")
    depth = 0
    for part in pure.parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            raise UnsafePathError(f"{what}: path {shown(path_text)} climbs out of its folder with '..'")
    return pure


def is_within(path: Path, roots) -> bool:
    return any(path == root or root in path.parents for root in roots)


def file_type(mode: int) -> str:
    """What a stat mode is, in words, for messages."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path, follow_links: bool = True):
    """Open a file for reading in binary mode only if it is a regular file, else raise OSError naming what it is.

    Opened with O_NONBLOCK, then fstat'ed: the file judged is the one opened (no race between a look and the
    open), and a FIFO neither blocks the open nor any read. Reads of a regular file ignore O_NONBLOCK."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_links else os.O_NOFOLLOW)
    descriptor = os.open(path, flags)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file: {file_type(mode)}", os.fspath(path))
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


# --- files written inside a root, never through a link ------------------------------------------------------
# A download lands in `<raw_root>/<raw_dir>/...`: the root (that source's folder) may itself be a link (the
# configuration saying where the source lives), nothing below it may be. Each folder is opened from the one
# above it with O_NOFOLLOW, so what is checked is what is written into: no race between a look and the open.

_NOT_SUPPORTED = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK}  # no hard links here


def _what_is(path: Path) -> str:
    """What stands at `path`, in words: a link and where it leads, or the file type."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "not a folder"
    if stat.S_ISLNK(mode):
        return f"a symbolic link to {os.path.realpath(path)}"
    return file_type(mode)


def link_refusal(path: Path) -> UnsafePathError:
    """The error for a link (or what is not a regular file) where a file is to be written: `path` named."""
    return _refuse(path, _what_is(path))


def _refuse(path: Path, what: str) -> UnsafePathError:
    return UnsafePathError(
        f"{path} is {what}: nothing is written through a link or into what is not a regular file. Delete it "
        f"(rm {path}; a link's target is kept), then run again"
    )


def _folder(folder: Path, root: Path, make: bool) -> int:
    """A descriptor of `folder` (`root` or a folder under it, as text), each part below `root` opened with
    O_NOFOLLOW from the one above and made when absent (`make`); UnsafePathError naming the first link or
    non-folder on the way."""
    parts = PurePosixPath(os.path.relpath(folder, root)).parts
    if parts == (".",):
        parts = ()
    if ".." in parts:
        raise UnsafePathError(f"{folder} is not under {root}: nothing is written outside it")
    if make:
        root.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    current = root
    try:
        for part in parts:
            current = current / part
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=descriptor)
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=descriptor)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refuse(current, _what_is(current)) from None
                raise OSError(exc.errno, exc.strerror, str(current)) from None
            os.close(descriptor)
            descriptor = inner
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def open_for_writing(path: Path, root: Path, append: bool = False):
    """`path` (under `root`) opened for writing in binary mode, created when absent, truncated unless `append`.

    Refused with UnsafePathError naming it, nothing written: a link at the name or on the way below `root`, a
    folder, a FIFO, a device, or a file with other names (hard links: writing it would change them too). The
    file is opened with O_NOFOLLOW and O_NONBLOCK (a FIFO neither blocks the open nor is written), then judged
    by fstat: the file judged is the one written."""
    folder = _folder(path.parent, root, make=True)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        descriptor = os.open(path.name, flags, 0o666, dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.ENOTDIR):
            raise _refuse(path, _what_is(path)) from None
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    finally:
        os.close(folder)
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            raise _refuse(path, file_type(found.st_mode))
        if found.st_nlink != 1:
            raise _refuse(path, f"a file with {found.st_nlink} names (hard links), which a write would change too")
        os.set_blocking(descriptor, True)
        if not append:
            os.ftruncate(descriptor, 0)
        handle = os.fdopen(descriptor, "ab")
    except BaseException:
        os.close(descriptor)
        raise
    return handle


def _appeared(target: Path, source: Path) -> UnsafePathError:
    return UnsafePathError(
        f"{target} appeared while it was downloaded: it is kept as it is, and the download stays in {source}; "
        "move one of them away, then run again"
    )


def place_new(source: Path, target: Path, root: Path, replace: bool = False) -> None:
    """Give the finished file `source` the name `target` (same folder, under `root`), never over a link or a
    folder, nor over any file unless `replace` (a regular file only: a rename replaces the name, it never
    writes through it). Without `replace` the name is taken with a hard link, which fails when the name
    exists, then `source` is unlinked; where hard links are not supported, a look then a rename."""
    if source.parent != target.parent:
        raise ValueError(f"{source} and {target} are not in one folder")
    folder = _folder(target.parent, root, make=False)
    try:
        try:
            standing = os.lstat(target.name, dir_fd=folder).st_mode
        except FileNotFoundError:
            standing = None
        if standing is not None and not stat.S_ISREG(standing):
            raise _refuse(target, _what_is(target))
        if standing is not None and not replace:
            raise _appeared(target, source)
        if standing is not None:
            os.replace(source.name, target.name, src_dir_fd=folder, dst_dir_fd=folder)
            return
        try:
            os.link(source.name, target.name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
        except FileExistsError:
            raise _appeared(target, source) from None
        except OSError as exc:
            if exc.errno not in _NOT_SUPPORTED:
                raise OSError(exc.errno, exc.strerror, str(target)) from None
            os.rename(source.name, target.name, src_dir_fd=folder, dst_dir_fd=folder)
            return
        os.unlink(source.name, dir_fd=folder)
    finally:
        os.close(folder)


def check_folders(paths, root: Path) -> None:
    """UnsafePathError naming the first link or non-folder on the way from `root` to the folder of any of
    `paths` (folders not made yet end the look): said before anything is written, not midway."""
    for folder in dict.fromkeys(Path(path).parent for path in paths):
        current = root
        for part in PurePosixPath(os.path.relpath(folder, root)).parts:
            if part == "..":
                raise UnsafePathError(f"{folder} is not under {root}: nothing is written outside it")
            if part == ".":
                continue
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                break
            if not stat.S_ISDIR(mode):
                raise _refuse(current, _what_is(current))
