"""What the Train_Data JSONL files name, wherever they sit under Train_Data/: their records, each image path
attributed to a subset by the path itself, and the fields of those paths that fit an output name template (a
JSONL-driven build makes exactly those).

The training config keeps some files in folders that are not the test folders (`2D_Task/Brain_Tumor_MRI/`,
`ISIC_2019/`, `VinDrCXR/`, text files directly in `Text_Task/`), so a file's folder says nothing reliable; an
image path is relative to DATA_BASEDIR (`./2D_Images/<folder>/...`) and belongs to the subset whose image tree
it falls under (its image root, its task files' roots, a folder it writes, or else its folder under
2D_Images/ or 3D_Images/; the longest of these that holds the path wins).
"""

from __future__ import annotations

import os
import posixpath
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from preprocess.formats import releasefile
from preprocess.registry.model import Registry, Subset
from preprocess.release import records

TRAIN_DATA = "Train_Data"


@dataclass(frozen=True)
class TrainRecord:
    """One record of a Train_Data JSONL that names images of one subset."""

    file: Path
    number: int  # 0-based line number in the file
    record: dict
    paths: tuple[str, ...]  # its image paths of that subset, normalised relative to DATA_BASEDIR, in order
    unsafe: tuple[str, ...] = ()  # why each of its other paths of that subset names no file (absolute, a NUL, ...)


def train_jsonl_files(data_basedir: Path) -> list[Path]:
    """Every `*.jsonl` under DATA_BASEDIR/Train_Data/, in any folder, sorted: every entry but a folder, so a
    FIFO or a link to nothing named like one is listed (validate says what it is), never passed over."""
    base = Path(data_basedir) / TRAIN_DATA
    return sorted(p for p in base.rglob("*.jsonl") if not p.is_dir()) if base.is_dir() else []


def normalise(path_text: str) -> str:
    """A Train_Data image path as it names a file under DATA_BASEDIR ('./' and repeated '/' gone)."""
    return posixpath.normpath(path_text)


class ImageTrees:
    """Which subset an image path (relative to DATA_BASEDIR) belongs to, by its prefix."""

    def __init__(self, registry: Registry):
        roots: dict[str, set[str]] = {}
        for subset in registry.subsets:
            for root in _subset_roots(subset):
                roots.setdefault(root, set()).add(subset.key)
        # longest first: a path under a deeper root belongs to that root's subset
        self.prefixes = tuple(sorted(((r, tuple(sorted(k))) for r, k in roots.items()), key=lambda p: -len(p[0])))

    def subset_of(self, path_text: str) -> str | None:
        """The key of the subset the path belongs to; None when no subset's tree holds it alone. An absolute
        path belongs where its relative form would (it is that subset's unsafe path, not a path of no subset)."""
        path = normalise(path_text.lstrip("/"))
        for root, keys in self.prefixes:
            if path.startswith(root + "/"):
                return keys[0] if len(keys) == 1 else None
        return None

    def why_none(self, path_text: str) -> str:
        """Why `subset_of` found no subset (for the user: what the path would need to start with)."""
        path = normalise(path_text)
        for root, keys in self.prefixes:
            if path.startswith(root + "/"):
                return f"it falls under {root}/, which {' and '.join(keys)} share, and under neither's own image root"
        top = "/".join(PurePosixPath(path).parts[:2])
        return (
            f"{top}/ is no subset's image folder (a Train_Data path starts with 2D_Images/<folder>/ or "
            "3D_Images/<folder>/ of a subset; `python -m preprocess list` shows their image roots)"
        )


def _subset_roots(subset: Subset) -> set[str]:
    """The folders a subset's images sit in, relative to DATA_BASEDIR, without a trailing '/'."""
    if subset.image_root is None:
        return set()
    top = "/".join(PurePosixPath(subset.image_root).parts[:2])
    roots = {top, normalise(subset.image_root)}
    roots |= {normalise(task.image_root) for task in subset.tasks if task.image_root}
    for conversion in subset.conversions:
        folder = conversion.params.get("train_folder")  # a train twin writing beside the test folder
        if isinstance(folder, str):
            roots.add(normalise(f"{top}/{folder}"))
    return roots


def read_lines(path: Path, data_basedir: Path) -> Iterator[tuple[int, object]]:
    """(0-based line number, parsed value) of each line of a JSONL that parses (releasefile.read_jsonl); broken
    lines are left to the validator, a file that cannot be read (or resolves out of DATA_BASEDIR) raises
    releasefile.ReleaseFileError."""
    for number, value in releasefile.read_jsonl(path, data_basedir):
        if not isinstance(value, releasefile.BrokenLine):
            yield number, value


@dataclass(frozen=True)
class FileNames:
    """What one Train_Data file names: the subsets of its image paths (in the order first named), and
    whether some path belongs to no subset; or, for a file that cannot be read, what is wrong with it."""

    subsets: tuple[str, ...]
    stray: bool
    problem: str | None = None


# (trees, DATA_BASEDIR, path, mtime, size) -> FileNames: a file is read once per process
_INDEX: dict[tuple, FileNames] = {}


def file_names(data_basedir: Path, path: Path, trees: ImageTrees) -> FileNames:
    """The subsets a Train_Data file names (an unreadable file names none, and says why: `problem`)."""
    try:
        stat = os.stat(path)
    except OSError:  # a link to nothing: the reader names the link
        return FileNames((), False, releasefile.problem(path, jsonl=True, inside=data_basedir))
    key = (trees.prefixes, str(data_basedir), str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _INDEX:
        _INDEX[key] = _names(data_basedir, path, trees)
    return _INDEX[key]


def _names(data_basedir: Path, path: Path, trees: ImageTrees) -> FileNames:
    found: dict[str, None] = {}
    stray = False
    try:
        for number, record in read_lines(path, data_basedir):
            if isinstance(record, dict):
                for ref in records.train_record_images(number, record):
                    owner = trees.subset_of(ref.path)
                    stray |= owner is None
                    if owner is not None:
                        found.setdefault(owner, None)
    except releasefile.ReleaseFileError as exc:
        return FileNames((), False, str(exc))
    return FileNames(tuple(found), stray)


def registered_subset(data_basedir: Path, registry: Registry, path: Path) -> str | None:
    """The subset the registry lists a Train_Data file under (None: not listed, or listed with no subset)."""
    relative = Path(path).relative_to(Path(data_basedir) / TRAIN_DATA).as_posix()
    return registry.train_files.get(relative)


def owner_of(data_basedir: Path, registry: Registry, path: Path, trees: ImageTrees | None = None) -> str | None:
    """The subset that answers for a whole Train_Data file (its unreadable lines, its paths of no subset): the
    one the registry lists it under, else the first subset its paths name, else none."""
    listed = registered_subset(data_basedir, registry, path)
    if listed is not None:
        return listed
    named = file_names(data_basedir, path, trees or ImageTrees(registry)).subsets
    return named[0] if named else None


def files_of(data_basedir: Path, registry: Registry, subset: Subset) -> list[Path]:
    """The Train_Data files that name an image of the subset or that it answers for, sorted."""
    trees = ImageTrees(registry)
    return [
        path
        for path in train_jsonl_files(data_basedir)
        if subset.key in file_names(data_basedir, path, trees).subsets
        or owner_of(data_basedir, registry, path, trees) == subset.key
    ]


def records_for(data_basedir: Path, registry: Registry, subset: Subset) -> Iterator[TrainRecord]:
    """Every record of every Train_Data JSONL that names at least one image of the subset, file by file in
    order, with those of its image paths that belong to the subset."""
    trees = ImageTrees(registry)
    for path in train_jsonl_files(data_basedir):
        if subset.key not in file_names(data_basedir, path, trees).subsets:
            continue
        for number, record in read_lines(path, data_basedir):
            if not isinstance(record, dict):
                continue
            refs = [r for r in records.train_record_images(number, record) if trees.subset_of(r.path) == subset.key]
            judged = [(ref, records.unsafe_path(ref)) for ref in refs]
            paths = tuple(normalise(ref.path) for ref, why in judged if why is None)
            unsafe = tuple(why for _, why in judged if why is not None)
            if paths or unsafe:
                yield TrainRecord(path, number, record, paths, unsafe)


def named_paths(data_basedir: Path, registry: Registry, subset: Subset) -> list[str]:
    """Every image path of the subset that a Train_Data JSONL names, normalised, each once, in order."""
    seen: dict[str, None] = {}
    for found in records_for(data_basedir, registry, subset):
        for path in found.paths:
            seen.setdefault(path, None)
    return list(seen)


def template_pattern(template: str) -> re.Pattern:
    """A regular expression matching the names `template` makes; each field one path part or less."""
    parts = []
    for literal, field, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(f"(?P<{field}>[^/]+?)")
    return re.compile("".join(parts))


def wanted(data_basedir: Path, registry: Registry, subset: Subset, template: str) -> list[dict]:
    """The fields of each Train_Data path under the subset's image root that `template` could have made."""
    root = normalise(subset.image_root)
    pattern = template_pattern(template)
    found = []
    for path in named_paths(data_basedir, registry, subset):
        if path.startswith(root + "/"):
            match = pattern.fullmatch(path[len(root) + 1 :])
            if match:
                found.append(match.groupdict())
    return found
