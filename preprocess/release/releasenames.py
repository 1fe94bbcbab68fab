"""The release's own records as the names of a subset's outputs: each image path a task JSON or Train_Data
JSONL names (relative to DATA_BASEDIR, as the evaluation opens it), with the record that names it.

Record-driven conversions (RadImageNet-VQA, PathVQA, VQA-RAD, MedPix; the train images of ISIC-2019 and
Kvasir) write exactly these paths: no public script gives their names, only the release does. Without the
release's file there is nothing to name, and `missing` says which file to download; a file that exists but
cannot be read (formats/releasefile.py) is named with what is wrong with it. A path that names no file under
its root (absolute, climbing out, a NUL, a part over 255 bytes: validate's `unsafe`) is never joined to it:
it is a bad item of the conversion, named by its file and record.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from preprocess.formats import releasefile
from preprocess.registry import layout
from preprocess.release import records, trainlist

TEST, TRAIN = "test", "train"
UNREADABLE = "cannot be read:"  # in the line of a release file that exists but cannot be read


@dataclass(frozen=True)
class NamedRecord:
    """One record of a task JSON (the same fields as trainlist.TrainRecord, for the test side)."""

    file: Path
    number: int  # the record's position in the file, from 0
    record: dict
    paths: tuple[str, ...]  # its image paths, relative to DATA_BASEDIR, normalised
    unsafe: tuple[str, ...] = ()  # why each of its other paths names no file (absolute, a NUL, ...; validate's unsafe)


def _normal(path: str) -> str:
    return os.path.normpath(path.removeprefix("./"))


def _task_files(data_basedir: Path, subset) -> Iterator[tuple]:
    """(task, its path, its image root) of each task file of the subset with an image root that exists (a FIFO
    or a link to nothing too: the reader says what it is)."""
    for task in subset.tasks:
        path = layout.task_dir(data_basedir, subset) / task.file
        root = task.image_root or subset.image_root
        if root is not None and os.path.lexists(path):
            yield task, path, root


def task_records(data_basedir: Path, subset) -> Iterator[NamedRecord]:
    """The records of the subset's readable task JSONs, each safe path joined to its task file's image root
    (files that cannot be read are `unreadable`'s; records that are not objects the validator's to report)."""
    for task, path, root in _task_files(data_basedir, subset):
        try:
            rows = releasefile.read_task_json(path, data_basedir)
        except releasefile.ReleaseFileError:
            continue
        for number, row in enumerate(rows):
            if isinstance(row, dict):
                refs = records.task_record_images(number, row, task.parser)
                judged = [(ref, records.unsafe_path(ref)) for ref in refs]
                paths = tuple(_normal(f"{root}/{ref.path}") for ref, why in judged if why is None)
                yield NamedRecord(path, number, row, paths, tuple(why for _, why in judged if why is not None))


def unreadable(data_basedir: Path, registry, subset, side: str) -> list[str]:
    """A line per release file of this side that exists but cannot be read, saying what is wrong with it: the
    subset's task JSONs (TEST), or the Train_Data JSONLs the registry lists under the subset (TRAIN)."""
    found = []
    if side == TEST:
        for _, path, _ in _task_files(data_basedir, subset):
            problem = releasefile.problem(path, jsonl=False, inside=data_basedir)
            if problem is not None:
                found.append((path, problem))
    else:
        trees = trainlist.ImageTrees(registry)
        for path in trainlist.train_jsonl_files(data_basedir):
            if trainlist.registered_subset(data_basedir, registry, path) == subset.key:
                problem = trainlist.file_names(data_basedir, path, trees).problem
                if problem is not None:
                    found.append((path, problem))
    return [
        f"release: {path.relative_to(data_basedir).as_posix()} {UNREADABLE} {problem}; {releasefile.REPLACE}"
        for path, problem in found
    ]


def train_records(data_basedir: Path, registry, subset) -> Iterator:
    """The Train_Data records naming images of the subset (trainlist.TrainRecord: every JSONL under
    Train_Data/ wherever it sits, each path given to the subset its own prefix names)."""
    return trainlist.records_for(data_basedir, registry, subset)


def _records(data_basedir: Path, registry, subset, side: str) -> Iterator:
    found = task_records(data_basedir, subset) if side == TEST else train_records(data_basedir, registry, subset)
    return (r for r in found if r.paths or r.unsafe)


def release_files(data_basedir: Path, subset, side: str) -> list[Path]:
    """The release files a record-driven conversion of one side reads for its names: the subset's task JSONs
    that exist (TEST), or every Train_Data JSONL (TRAIN: any of them may name the subset's images)."""
    if side == TEST:
        tasks = (layout.task_dir(data_basedir, subset) / task.file for task in subset.tasks)
        return [path for path in tasks if path.is_file()]
    return trainlist.train_jsonl_files(data_basedir)


def named_records(data_basedir: Path, registry, subset, side: str) -> list:
    """The records of one side: TEST (the task JSONs) or TRAIN (the Train_Data JSONLs), those naming a path
    (a path that names no file, `unsafe`, counts: it is a bad item of the conversion)."""
    return list(_records(data_basedir, registry, subset, side))


def unsafe_items(named: list) -> list[tuple[str, str]]:
    """The bad items (item, message) of the records' unsafe paths, each named by its file and record: no
    output is made for such a path (on_bad_input: skip lists them in the manifest, fail stops on them)."""
    return [(f"{r.file} record {r.number}", f"{r.file} record {r.number}: {why}") for r in named for why in r.unsafe]


def missing(data_basedir: Path, registry, subset, side: str) -> list[str]:
    """What is wrong with the release files that name the outputs of this side: those that cannot be read,
    else what to download when none names them (empty: they are all readable and some file names them)."""
    return unreadable(data_basedir, registry, subset, side) or _unnamed(data_basedir, registry, subset, side)


def _unnamed(data_basedir: Path, registry, subset, side: str) -> list[str]:
    """What to download when no release file names an output of this side (empty: some record does)."""
    if next(_records(data_basedir, registry, subset, side), None) is not None:  # the first record will do
        return []
    if side == TEST:
        files = ", ".join(f"{subset.group}/{subset.folder}/{t.file}" for t in subset.tasks)
        return [
            f"release: {files} is missing under {data_basedir} (or names no image); the names of these images are "
            f"given only by it: download the benchmark release's {subset.group}/{subset.folder}/ into DATA_BASEDIR"
        ]
    folder = "/".join(Path(subset.image_root).parts[:2])
    listed = sorted(f"Train_Data/{path}" for path, key in registry.train_files.items() if key == subset.key)
    return [
        f"release: no Train_Data JSONL under {data_basedir} names an image of {folder}/; the names of its train "
        f"images are given only by them: download the benchmark release's {', '.join(listed) or 'Train_Data/'} "
        "into DATA_BASEDIR (or build this subset with splits: test)"
    ]


def missing_for_build(registry, subset, settings, conversions=None) -> list[str]:
    """What a build of the subset lacks of the release (its conversions for the splits `settings` asks for, or
    `conversions`): every release file of the sides it builds that exists but cannot be read, whatever its
    conversions read (validate fails such a file, so a build beside it could not pass, and an image-folder
    subset such as APTOS is stopped as a record-driven one is); else, for its record-driven conversions, what
    to download when no release file names their outputs."""
    from preprocess.registry import splits

    chosen = splits.conversions(settings, subset) if conversions is None else conversions
    data_basedir = Path(settings.data_basedir)
    recorded = sorted({c.params["records"] for c in chosen if "records" in c.params})
    # the task JSONs are the release's test files, whatever the build makes; a conversion's split is TEST or TRAIN
    built = sorted({TEST} | {c.split for c in chosen} | set(recorded))
    problems = [line for side in built for line in unreadable(data_basedir, registry, subset, side)]
    return problems or [line for side in recorded for line in _unnamed(data_basedir, registry, subset, side)]
