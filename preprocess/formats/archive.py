"""Read members out of zip archives safely: never an absolute name, a '..' escape, a link, or a name with a NUL,
a backslash or a component over 255 bytes."""

from __future__ import annotations

import posixpath
import stat
import zipfile
from pathlib import Path

from preprocess.errors import RawDataError
from preprocess.formats.fsutil import name_problem


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


class SafeArchive:
    """A zip's members by name (unsafe ones set aside in `refused`), readable one at a time."""

    def __init__(self, path: Path):
        self.path = path
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
        try:
            return self._zip.read(self.members[name])
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise RawDataError(f"{self.path}: member {name} is unreadable ({exc}); download it again") from None

    def close(self) -> None:
        self._zip.close()
