"""A download's temporary file, how a rerun knows it is its own, and the listing check that keeps listed names
out of that namespace.

A file comes into `.<name>.medheb-download.part` beside its name: the convert side's convention
(formats/partnames.py: hidden, marked `medheb-`, `.part`), a name no listed file nor a user's file plausibly has.
A user's `<name>.part` is therefore never looked at. The name alone does not make a file ours, though: a
leftover is resumed (appended to, emptied, then removed when its hash is wrong), which must never happen to a
file someone else put there. So a download claims its `.part` when it creates it, before any byte:
`.<name>.medheb-download.claim` records the part's inode and the address it comes from. A file at the part's
name is ours only when that record names its inode; anything else there (a file without a record, a link, a
FIFO, a folder: fsutil.open_for_writing) is refused, named, and kept as it is. The inode, not the device: a
network file system's device number may change between mounts, its inode numbers do not.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath

from preprocess.errors import RawDataError, UnsafePathError
from preprocess.formats.fsutil import atomic_write_bytes, open_for_writing, open_regular
from preprocess.formats.partnames import PART_MARK, is_part_name

TAG = "download"
_CLAIM_SUFFIX = f".{PART_MARK}{TAG}.claim"
_CLAIM_MOST = 64 << 10  # a record is a few hundred bytes: a larger file at its name is not one


def part_of(target: Path) -> Path:
    return target.with_name(f".{target.name}.{PART_MARK}{TAG}.part")


def claim_of(part: Path) -> Path:
    return part.with_name(part.name.removesuffix(".part") + ".claim")


def is_download_part(name: str) -> bool:
    return is_part_name(name, TAG)


def open_part(part: Path, root: Path, url: str, target: Path):
    """`part` opened for appending: new (claimed before any byte), or an interrupted download's of ours (of
    another address: emptied first). UnsafePathError naming it when it is anything else, nothing changed."""
    existed = os.path.lexists(part)
    record = _record(claim_of(part), part, target) if existed else None
    handle = open_for_writing(part, root, append=True)  # a link, a FIFO, a folder, a hard link: refused here
    try:
        inode = os.fstat(handle.fileno()).st_ino
        if existed and (record is None or record.get("inode") != inode):
            raise _not_ours(part, target)
        if existed and record.get("url") != url:  # ours, but the start of another file (another commit)
            restart(handle)
        if not existed or record.get("url") != url:
            _claim(part, inode, url, target)
    except BaseException:
        handle.close()
        raise
    return handle


def drop(part: Path) -> None:
    """Remove an own part (what came is not the file) and its record."""
    part.unlink(missing_ok=True)
    done(part)


def done(part: Path) -> None:
    """The part was given its name (or removed): its record goes too."""
    claim_of(part).unlink(missing_ok=True)


def restart(handle) -> None:
    handle.seek(0)
    handle.truncate()


def _record(claim: Path, part: Path, target: Path) -> dict | None:
    """The record at `claim` (None: there is none), or the refusal of `part` when what is there is no record."""
    try:
        with open_regular(claim, follow_links=False) as handle:
            text = handle.read(_CLAIM_MOST + 1)
    except FileNotFoundError:
        return None
    except OSError:  # a link, a FIFO, a folder at the record's name: nothing of ours
        raise _not_ours(part, target) from None
    try:
        value = json.loads(text) if len(text) <= _CLAIM_MOST else None
    except ValueError:
        value = None
    if not isinstance(value, dict) or value.get("part") != part.name:
        raise _not_ours(part, target)
    return value


def _claim(part: Path, inode: int, url: str, target: Path) -> None:
    claim = claim_of(part)
    if os.path.lexists(claim):  # a record left when a finished part was named just before a stop: ours only
        _record(claim, part, target)
    atomic_write_bytes(claim, json.dumps({"part": part.name, "inode": inode, "url": url}).encode())


def _not_ours(part: Path, target: Path) -> UnsafePathError:
    return UnsafePathError(
        f"{part} is not a download this pipeline started (no record of it in {claim_of(part)}): it is kept as it "
        f"is and nothing was fetched to {target}. Move it away (it may be yours; if it is a download of ours "
        "whose record was lost, delete it), then run again"
    )


def check_listing(repo: str, commit: str, paths) -> None:
    """Refuse, before any download, a listing that is no tree of files: a path listed both as a file and as
    the folder of another path (the second write would fail half-way), or a file named as the pipeline names
    its own temporaries (it would be taken for one)."""
    listed = set(paths)
    for path in sorted(listed):
        name = PurePosixPath(path).name
        if is_part_name(name) or (name.startswith(".") and name.endswith(_CLAIM_SUFFIX)):
            raise RawDataError(
                f"{repo} (commit {commit}) lists {path}, a name this pipeline keeps for its own temporary files "
                f"(.<name>.{PART_MARK}<tag>.part): nothing was downloaded. Rename it in the repository, or choose "
                "another --revision of a release, then run again"
            )
        folder = next((str(p) for p in PurePosixPath(path).parents if str(p) in listed), None)
        if folder is not None:
            raise RawDataError(
                f"{repo} (commit {commit}) lists {folder} both as a file and as the folder of {path}: a path "
                "cannot be both, so nothing was downloaded. Fix the repository's file list, or choose "
                "another --revision of a release, then run again"
            )
