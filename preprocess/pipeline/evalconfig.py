"""The bridge to the benchmark's evaluation: its config files (2D_Task.yaml, 3D_Task.yaml, Text_Task.yaml) for
the task files that a tree holds, in the evaluation code's own entry format."""

from __future__ import annotations

from pathlib import Path

import yaml

from preprocess.formats.fsutil import atomic_write_text
from preprocess.registry.model import GROUPS, Registry, Subset, Task
from preprocess.release import records
from preprocess.reports.summaries import unloadable_line
from preprocess.verify.validate import load_records

NAMES = tuple(f"{group}.yaml" for group in GROUPS)  # the files written into the folder given
HEADER = (
    "# Written by `python -m preprocess eval-config` for the task files built under DATA_BASEDIR.\n"
    "# The evaluation opens each record path as DATA_BASEDIR / image_root / path.\n"
)


def listed(registry: Registry, data_basedir: Path) -> list[tuple[Subset, Task, str]]:
    """(subset, task, data_path) of every task file that exists and whose image root exists."""
    found = []
    for subset in registry.subsets:
        for task in subset.tasks:
            data_path = f"{subset.group}/{subset.folder}/{task.file}"
            if not (data_basedir / data_path).is_file():
                continue
            if task.image_root is not None and not (data_basedir / task.image_root).is_dir():
                continue  # not built
            found.append((subset, task, data_path))
    return found


def entries(registry: Registry, data_basedir: Path) -> dict[str, dict[str, dict]]:
    """Config file name -> {entry: fields} for every task file that exists and whose image root exists."""
    configs: dict[str, dict[str, dict]] = {name: {} for name in NAMES}
    for subset, task, data_path in listed(registry, data_basedir):
        entry = {"dataset_parser": task.parser, "dataset_name": task.name, "dataset_split": "test"}
        if task.image_root is not None:
            entry["image_root"] = task.image_root
        entry |= {"data_path": data_path, "eval_type": task.type}
        configs[subset.group_config][task.eval] = entry
    return configs


def loader_warnings(registry: Registry, data_basedir: Path) -> list[str]:
    """Per listed task file whose evaluation loader cannot read some of its records as published (the
    release's multi-crop VinDr records): how many, their numbers and why (summaries.unloadable_line)."""
    lines = []
    for _, task, data_path in listed(registry, data_basedir):
        try:
            rows = load_records(data_basedir / data_path, jsonl=False, inside=data_basedir)
        except (OSError, UnicodeDecodeError, ValueError):
            continue  # validate names a task file it cannot read
        found = records.unloadable(rows, task.parser)
        if found:
            lines.append(unloadable_line(data_path, len(rows), found))
    return lines


def write_eval_configs(registry: Registry, data_basedir: Path, out: Path) -> dict[str, int]:
    """Write the three config files into `out`; return the number of entries of each."""
    counts = {}
    for name, config in entries(registry, data_basedir).items():
        text = yaml.safe_dump(config, sort_keys=False, indent=4, width=200) if config else "{}\n"
        atomic_write_text(out / name, HEADER + text)
        counts[name] = len(config)
    return counts
