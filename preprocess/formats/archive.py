"""Read members out of zip archives safely: never an absolute name, a '..' escape, a link, or a name with a NUL,
a backslash or a component over 255 bytes; never a member larger than MAX_MEMBER_BYTES, or one over 1 MiB that
inflates more than MAX_RATIO times its compressed size (a zip bomb: 4 GiB of zeros fit in 4 MB)."""

from __future__ import annotations

import posixpath
import stat
import zipfile
from pathlib import Path

from preprocess.errors import RawDataError
from preprocess.formats.fsutil import name_problem

# The largest member read (an image or a records file; the largest real ones are tens of MB), and the largest
# ratio of its size to its compressed size for a member over RATIO_FROM bytes (JPEG and PNG barely compress,
# JSON about 10x, runs of zeros about 1,000x). Each member is read in pieces of PIECE_BYTES.
MAX_MEMBER_BYTES = 256 << 20
MAX_RATIO, RATIO_FROM = 100, 1 << 20
PIECE_BYTES = 1 << 20


def member_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a member must not be extracted, or None. Its name as stored (zipfile cuts it at a NUL byte)."""
    name = info.orig_filename
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    problem = name_problem(name.rstrip("/"))
    if problem:
        return problem
    if stat.S_ISLNK(info.external_attr >> 16):
        return "symbolic link"
    return None


def meant_name(name: str) -> str:
    """The plain name a refused member stands for (to tell which listed image it holds; never read)."""
    return posixpath.normpath(name.split("\0")[0].replace("\\", "/")).lstrip("/")


def bound_problem(info: zipfile.ZipInfo, max_bytes: int = MAX_MEMBER_BYTES, max_ratio: float = MAX_RATIO) -> str | None:
    """What makes a member too big to read (from its declared sizes, nothing inflated), or None."""
    size, packed = info.file_size, max(1, info.compress_size)
    if size > max_bytes:
        return f"declares {size:,} bytes, over the bound of {max_bytes:,}"
    if size > RATIO_FROM and size / packed > max_ratio:
        return f"inflates {size:,} bytes out of {packed:,} ({size / packed:,.0f}x, over the bound of {max_ratio}x)"
    return None


def oversized_member(path: Path) -> str | None:
    """The first member of a zip over the bounds, described, or None (the central directory only is read)."""
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                why = bound_problem(info)
                if why is not None:
                    return f"holds member {info.filename} that {why}: the conversion refuses it; download it again"
    except (zipfile.BadZipFile, OSError) as exc:
        return f"is not a readable zip archive ({exc}); download it again"
    return None


class SafeArchive:
    """A zip's members by name (unsafe ones set aside in `refused`), readable one at a time."""

    def __init__(self, path: Path, max_member_bytes: int = MAX_MEMBER_BYTES, max_ratio: float = MAX_RATIO):
        self.path = path
        self.max_member_bytes, self.max_ratio = max_member_bytes, max_ratio
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise RawDataError(f"{path}: not a readable zip archive ({exc}); download it again") from None
        self.members: dict[str, zipfile.ZipInfo] = {}
        self.refused: dict[str, str] = {}
        for info in self._zip.infolist():
            if info.is_dir():
                continue
            problem = member_problem(info)
            if problem:
                self.refused[info.orig_filename] = problem
            else:
                self.members[info.filename] = info

    def read(self, name: str) -> bytes:
        """A member's bytes, read in pieces; one over the bounds is refused (RawDataError naming it), unread."""
        info = self.members[name]
        self._check_bounds(info)
        data = bytearray()
        try:
            with self._zip.open(info) as member:  # zipfile stops at the declared size and checks the CRC
                while piece := member.read(PIECE_BYTES):
                    data += piece
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise RawDataError(f"{self.path}: member {name} is unreadable ({exc}); download it again") from None
        return bytes(data)

    def _check_bounds(self, info: zipfile.ZipInfo) -> None:
        why = bound_problem(info, self.max_member_bytes, self.max_ratio)
        if why is not None:
            raise RawDataError(
                f"{self.path}: member {info.filename} {why}; refused unread (a damaged archive or a zip bomb): "
                "download the archive again from its upstream"
            )

    def close(self) -> None:
        self._zip.close()
