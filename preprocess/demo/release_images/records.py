"""The image paths the demo's release files name, read as plain JSON (not by the pipeline's readers).

A task JSON's paths are joined to its task file's image root, as the evaluation joins them; a Train_Data
JSONL's paths are relative to DATA_BASEDIR. Each path keeps the question and answer of the record that names
it as the query image: the record-driven oracles (vqa.py) tell images apart by them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

TEST, TRAIN = "test", "train"


@dataclass(frozen=True)
class Named:
    path: str  # relative to DATA_BASEDIR
    side: str  # TEST (a task JSON) or TRAIN (a Train_Data JSONL)
    question: str | None = None  # of the record naming it as its query image
    answer: str | None = None


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []  # "" is a record without an image, as the evaluation reads it
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _test_records(data_basedir: Path, subset) -> list[Named]:
    found = []
    for task in subset.tasks:
        root = task.image_root or subset.image_root
        path = Path(data_basedir) / subset.group / subset.folder / task.file
        if root is None or not path.is_file():
            continue
        for record in json.loads(path.read_text(encoding="utf-8")):
            answers = record.get("tgt_text")
            answer = answers[0] if isinstance(answers, list) and answers else answers
            for ref in _strings(record.get("qry_img_path")):
                found.append(Named(os.path.normpath(f"{root}/{ref}"), TEST, record.get("qry_text"), answer))
            for ref in _strings(record.get("tgt_img_path")):
                found.append(Named(os.path.normpath(f"{root}/{ref}"), TEST))
    return found


def _train_records(data_basedir: Path) -> list[Named]:
    found = []
    for path in sorted((Path(data_basedir) / "Train_Data").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            users = [m["content"] for m in record.get("messages", []) if m.get("role") == "user"]
            positives = record.get("positive_messages") or [[{}]]
            answer = positives[0][0].get("content") if positives[0] else None
            for ref in _strings(record.get("images")):
                found.append(
                    Named(os.path.normpath(ref.removeprefix("./")), TRAIN, users[-1] if users else None, answer)
                )
    return found


def named(data_basedir: Path, registry) -> list[Named]:
    """Every image path the release files in DATA_BASEDIR name, with its record's question and answer."""
    found = [n for subset in registry.subsets if not subset.is_text for n in _test_records(data_basedir, subset)]
    return found + _train_records(data_basedir)
