"""Read members out of zip archives safely: never an absolute name, a '..' escape or a link."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

from preprocess.errors import RawDataError


def member_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a member must not be extracted, or None."""
    name = info.filename
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    depth = 0
    for part in PurePosixPath(name.replace("\\", "/")).parts:
        depth += -1 if part == ".." else (0 if part in (".", "") else 1)
        if depth < 0:
            return "climbs out of the destination with '..'"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "symbolic link"
    return None


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
                self.refused[info.filename] = problem
            else:
                self.members[info.filename] = info

    def read(self, name: str) -> bytes:
        try:
            return self._zip.read(self.members[name])
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise RawDataError(f"{self.path}: member {name} is unreadable ({exc}); download it again") from None

    def close(self) -> None:
        self._zip.close()
