"""Read members out of zip archives safely: never an absolute name, a '..' escape, a link, or a name with a NUL,
a backslash or a component over 255 bytes; never a member larger than MAX_MEMBER_BYTES, or one over 1 MiB that
inflates more than MAX_RATIO times its compressed size (a zip bomb: 4 GiB of zeros fit in 4 MB).

Every zip reader (this module's, the .npz reader, the scene graphs) also refuses, naming the archive and the
member, one that is encrypted or packed with a method it does not read (Deflate64, AES, ...): no upstream
archive of the benchmark is, so the copy was re-packed or damaged. A name held twice is read from every copy:
identical copies are one member, copies with other bytes are refused (which one is the published file cannot
be told). An .npz holding an array twice is refused outright (numpy writes each once)."""

from __future__ import annotations

import lzma
import posixpath
import stat
import zipfile
import zlib
from pathlib import Path

from preprocess.errors import RawDataError
from preprocess.formats.fsutil import name_problem

# The largest member read (an image or a records file; the largest real ones are tens of MB), and the largest
# ratio of its size to its compressed size for a member over RATIO_FROM bytes (JPEG and PNG barely compress,
# JSON about 10x, runs of zeros about 1,000x). Each member is read in pieces of PIECE_BYTES.
MAX_MEMBER_BYTES = 256 << 20
MAX_RATIO, RATIO_FROM = 100, 1 << 20
PIECE_BYTES = 1 << 20

# The compression methods zipfile inflates; an .npz's members go through ISA-L, which reads the first two only.
ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})
NPZ_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
METHOD_NAMES = {1: "Shrink", 6: "Implode", 9: "Deflate64", 12: "bzip2", 14: "LZMA", 93: "Zstandard", 95: "xz"}
METHOD_NAMES |= {98: "PPMd", 99: "AES encryption"}
# General purpose flag bits (APPNOTE 4.4.4): bit 0 encrypted, bit 6 strong encryption.
ENCRYPTED_FLAGS = 0x01 | 0x40
AES = 99


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


def unreadable_problem(info: zipfile.ZipInfo, methods=ZIP_METHODS) -> str | None:
    """Why a member cannot be read by a reader of `methods` (encrypted, or an unread method), or None; from the
    central directory, which every reader here takes the flags and the method from."""
    if info.flag_bits & ENCRYPTED_FLAGS or info.compress_type == AES:
        return "is encrypted (the zip's encryption flag is set); the pipeline reads no password-protected member"
    if info.compress_type not in methods:
        name = METHOD_NAMES.get(info.compress_type, "unknown")
        return f"is packed with compression method {info.compress_type} ({name}), which the pipeline does not read"
    return None


def refusal(path: Path, info: zipfile.ZipInfo, why: str) -> RawDataError:
    """The error for a member that cannot be read: what to do about the archive."""
    repack = "numpy.savez" if path.name.endswith(".npz") else "zip -r, plain deflate"
    return RawDataError(
        f"{path}: member {info.filename} {why}. No published archive of the benchmark's sources is packed so: "
        f"download it again, or unpack your copy with a tool that reads it (7-Zip: 7z x) and pack it again ({repack})"
    )


def check_readable(path: Path, info: zipfile.ZipInfo, methods=ZIP_METHODS) -> None:
    why = unreadable_problem(info, methods)
    if why is not None:
        raise refusal(path, info, why)


def copies_by_name(infos) -> dict[str, list[zipfile.ZipInfo]]:
    """Each member name and every entry that holds it, in archive order (zipfile's getinfo keeps the last)."""
    found: dict[str, list[zipfile.ZipInfo]] = {}
    for info in infos:
        found.setdefault(info.filename, []).append(info)
    return found


def read_member(archive: zipfile.ZipFile, path: Path, copies: list[zipfile.ZipInfo], bounds=None) -> bytes:
    """The bytes of a member held by `copies` (its entries: one, or more under one name), each copy checked
    (readable, within `bounds`: (max_bytes, max_ratio)) and read in pieces; copies with other bytes are refused."""
    first = None
    for info in copies:
        check_readable(path, info)
        why = bound_problem(info, *(bounds or (MAX_MEMBER_BYTES, MAX_RATIO)))
        if why is not None:
            raise RawDataError(
                f"{path}: member {info.filename} {why}; refused unread (a damaged archive or a zip bomb): "
                "download the archive again from its upstream"
            )
        data = _pieces(archive, path, info)
        if first is not None and data != first:
            raise RawDataError(
                f"{path}: member {info.filename} is held {len(copies)} times with different bytes; which copy is "
                "the published one cannot be told: download the archive again"
            )
        first = data
    return first


def _pieces(archive: zipfile.ZipFile, path: Path, info: zipfile.ZipInfo) -> bytes:
    data = bytearray()
    try:
        with archive.open(info) as member:  # zipfile stops at the declared size and checks the CRC
            while piece := member.read(PIECE_BYTES):
                data += piece
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, lzma.LZMAError) as exc:  # bzip2 raises OSError
        raise RawDataError(f"{path}: member {info.filename} is unreadable ({exc}); download it again") from None
    return bytes(data)


def archive_problem(path: Path) -> str | None:
    """The first member of a zip over the bounds, encrypted or packed with an unread method, described, or None
    (the central directory only is read). An .npz is streamed (its arrays run to gigabytes: no size bound) and is
    judged as a whole by its MD5 and the npz reader: only a member no reader takes is named here."""
    npz = path.name.endswith(".npz")
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                why = None if npz else bound_problem(info)
                if why is not None:
                    return f"holds member {info.filename} that {why}: the conversion refuses it; download it again"
                why = unreadable_problem(info, NPZ_METHODS if npz else ZIP_METHODS)
                if why is not None:
                    return f"holds member {info.filename}: it {why}; download it again"
    except (zipfile.BadZipFile, OSError) as exc:
        return None if npz else f"is not a readable zip archive ({exc}); download it again"
    return None


class SafeArchive:
    """A zip's members by name (unsafe ones set aside in `refused`), readable one at a time."""

    def __init__(self, path: Path, max_member_bytes: int = MAX_MEMBER_BYTES, max_ratio: float = MAX_RATIO):
        self.path = path
        self.bounds = (max_member_bytes, max_ratio)
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise RawDataError(f"{path}: not a readable zip archive ({exc}); download it again") from None
        self.members: dict[str, list[zipfile.ZipInfo]] = {}
        self.refused: dict[str, str] = {}
        for info in self._zip.infolist():
            if info.is_dir():
                continue
            problem = member_problem(info)
            if problem:
                self.refused[info.orig_filename] = problem
            else:
                self.members.setdefault(info.filename, []).append(info)  # a name held twice: every copy

    def read(self, name: str) -> bytes:
        """A member's bytes, read in pieces; one over the bounds, encrypted, packed with an unread method, or
        held twice with other bytes is refused (RawDataError naming the archive and the member)."""
        return read_member(self._zip, self.path, self.members[name], self.bounds)

    def close(self) -> None:
        self._zip.close()
