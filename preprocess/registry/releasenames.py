"""The release's own records as the names of a subset's outputs: each image path a task JSON or Train_Data
JSONL names (relative to DATA_BASEDIR, as the evaluation opens it), with the record that names it.

Record-driven conversions (RadImageNet-VQA, PathVQA, VQA-RAD, MedPix; the train images of ISIC-2019 and
Kvasir) write exactly these paths: no public script gives their names, only the release does. Without the
release's file there is nothing to name, and `missing` says which file to download.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from preprocess.registry import layout, records, trainlist

TEST, TRAIN = "test", "train"


@dataclass(frozen=True)
class NamedRecord:
    """One record of a task JSON (the same fields as trainlist.TrainRecord, for the test side)."""

    file: Path
    number: int  # the record's position in the file, from 0
    record: dict
    paths: tuple[str, ...]  # its image paths, relative to DATA_BASEDIR, normalised


def _normal(path: str) -> str:
    return os.path.normpath(path.removeprefix("./"))


def task_records(data_basedir: Path, subset) -> Iterator[NamedRecord]:
    """The records of the subset's task JSONs that exist, each path joined to its task file's image root
    (unreadable files and records that are not objects are the validator's to report)."""
    for task in subset.tasks:
        path = layout.task_dir(data_basedir, subset) / task.file
        root = task.image_root or subset.image_root
        if root is None or not path.is_file():
            continue
        try:
            rows = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        for number, row in enumerate(rows if isinstance(rows, list) else []):
            if isinstance(row, dict):
                refs = records.task_record_images(number, row, task.parser)
                yield NamedRecord(path, number, row, tuple(_normal(f"{root}/{ref.path}") for ref in refs))


def train_records(data_basedir: Path, registry, subset) -> Iterator:
    """The Train_Data records naming images of the subset (trainlist.TrainRecord: every JSONL under
    Train_Data/ wherever it sits, each path given to the subset its own prefix names)."""
    return trainlist.records_for(data_basedir, registry, subset)


def _records(data_basedir: Path, registry, subset, side: str) -> Iterator:
    found = task_records(data_basedir, subset) if side == TEST else train_records(data_basedir, registry, subset)
    return (r for r in found if r.paths)


def release_files(data_basedir: Path, subset, side: str) -> list[Path]:
    """The release files a record-driven conversion of one side reads for its names: the subset's task JSONs
    that exist (TEST), or every Train_Data JSONL (TRAIN: any of them may name the subset's images)."""
    if side == TEST:
        tasks = (layout.task_dir(data_basedir, subset) / task.file for task in subset.tasks)
        return [path for path in tasks if path.is_file()]
    return trainlist.train_jsonl_files(data_basedir)


def named_records(data_basedir: Path, registry, subset, side: str) -> list:
    """The records of one side: TEST (the task JSONs) or TRAIN (the Train_Data JSONLs), those naming a path."""
    return list(_records(data_basedir, registry, subset, side))


def missing(data_basedir: Path, registry, subset, side: str) -> list[str]:
    """What to download when no release file names the outputs of this side (empty: some file does)."""
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


def missing_for_build(registry, subset, settings) -> list[str]:
    """What the build's record-driven conversions of the subset (for the splits `settings` asks for) lack:
    the release files that name their outputs."""
    from preprocess.registry import splits

    sides = sorted({c.params["records"] for c in splits.conversions(settings, subset) if "records" in c.params})
    return [line for side in sides for line in missing(Path(settings.data_basedir), registry, subset, side)]
