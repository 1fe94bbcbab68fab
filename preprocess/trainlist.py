"""What the Train_Data JSONL files of a subset name: their image paths (relative to DATA_BASEDIR), and the
fields of those that fit one of the registry's output name templates (a JSONL-driven build makes exactly
those)."""

from __future__ import annotations

import json
import os
import re
import string
from pathlib import Path

from preprocess import records
from preprocess.validate import train_files


def named_paths(data_basedir: Path, subset) -> list[str]:
    """Every image path of the subset's Train_Data JSONL files, normalised ('./' gone), each once, in order;
    lines that are not JSON records are left to the validator."""
    seen: dict[str, None] = {}
    for path in train_files(data_basedir, subset):
        with open(path, encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    for ref in records.train_record_images(number, record):
                        seen.setdefault(os.path.normpath(ref.path), None)
    return list(seen)


def template_pattern(template: str) -> re.Pattern:
    """A regular expression matching the names `template` makes; each field one path part or less."""
    parts = []
    for literal, field, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(f"(?P<{field}>[^/]+?)")
    return re.compile("".join(parts))


def wanted(data_basedir: Path, subset, template: str) -> list[dict]:
    """The fields of each JSONL path under the subset's image root that `template` could have made."""
    root = os.path.normpath(subset.image_root)
    pattern = template_pattern(template)
    found = []
    for path in named_paths(data_basedir, subset):
        if path.startswith(root + os.sep):
            match = pattern.fullmatch(path[len(root) + 1 :])
            if match:
                found.append(match.groupdict())
    return found
