"""Helpers the benchmark scripts share: whole-process timing into fresh folders, and CPU pinning."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def timed(command: list[str]) -> tuple[float, str]:
    """Wall seconds of one run of `command` and its standard error, after flushing earlier writes to disk."""
    os.sync()  # the previous run's dirty pages are written back now, not during this run
    started = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - started, done.stderr + done.stdout


@contextlib.contextmanager
def fresh_folders(parent: Path):
    """A generator of new, never-used output folders under `parent`; all are deleted at the end.

    Deleting a tree and writing it again at once measures the file system, not the tool: for a minute or
    more after a mass deletion, ext4 checks the recently freed inodes on every file it creates
    (`recently_deleted` in `ext4_create`), which raised the cost of creating a small file here from ~40 us
    to ~800 us. So every run writes to a new folder and the deletion waits until all runs are timed.
    """
    parent.mkdir(parents=True, exist_ok=True)
    runs = Path(tempfile.mkdtemp(prefix="runs-", dir=parent))  # never delete first: that would slow the runs
    try:
        yield (runs / f"run-{n}" for n in itertools.count())
    finally:
        shutil.rmtree(runs, ignore_errors=True)


def pinned(command: list[str], cpus: str) -> list[str]:
    """The command restricted to the given CPUs when taskset exists."""
    return ["taskset", "-c", cpus, *command] if shutil.which("taskset") else command
