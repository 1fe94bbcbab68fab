"""Helpers the benchmark scripts share: whole-process timing into fresh folders, and CPU pinning."""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(command: list[str]) -> tuple[float, str]:
    """Wall seconds of one run of `command` and its standard error, after flushing earlier writes to disk."""
    os.sync()  # the previous run's dirty pages are written back now, not during this run
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:  # its own last lines say why, not a CalledProcessError that hides them
        tail = "\n".join((done.stderr + done.stdout).strip().splitlines()[-15:])
        raise SystemExit(f"{' '.join(command)} failed (exit {done.returncode}):\n{tail}")
    return time.perf_counter() - started, done.stderr + done.stdout


# The benchmarks' reference tools that the package itself does not install: module -> how to install it.
REFERENCE_TOOLS = {
    "medmnist": "`make .venv/.reference` (the Makefile's target for tests/requirements-reference.txt), or by "
    "hand: pip install -r tests/requirements-reference.txt && pip install --no-deps medmnist==3.0.2",
}


def require_tool(module: str) -> None:
    """Stop before measuring anything when a reference tool the benchmark compares with is not installed."""
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:
        found = False
    if not found:
        raise SystemExit(
            f"the reference tool {module} is not installed for {sys.executable}: this benchmark compares the "
            f"pipeline with it. Install it with {REFERENCE_TOOLS[module]}"
        )


# ext4 without a journal (this machine's disk) will not reuse an inode freed less than 60 s ago, or 360 s
# while its inode table block is dirty (RECENTCY_MIN, RECENTCY_DIRTY in fs/ext4/ialloc.c), and looks each
# one up as it skips it. Here file creation stayed slow (110-450 us) for 6 minutes after `rm -rf` + `sync`.
DELETION_QUIET_S = 370
DELETION_MARKER = Path(__file__).resolve().parent / "out" / ".last-deletion"  # shared by all benchmarks


@contextlib.contextmanager
def fresh_folders(parent: Path):
    """A generator of new, never-used output folders under `parent`; all are deleted at the end.

    Deleting a tree and writing it again at once measures the file system, not the tool: after a mass
    deletion, ext4 checks the recently freed inodes on every file it creates (`recently_deleted` in
    `ext4_create`), which raised the cost of creating a small file here from ~35 us to ~800 us. So every run
    writes to a new folder, the deletion waits until all runs are timed, and its time is noted, so that the
    next benchmark waits until DELETION_QUIET_S have passed.
    """
    parent.mkdir(parents=True, exist_ok=True)
    wait_after_deletion(DELETION_MARKER)
    runs = Path(tempfile.mkdtemp(prefix="runs-", dir=parent))  # never delete first: that would slow the runs
    try:
        settle(runs / "probe")
        yield (runs / f"run-{n}" for n in itertools.count())
    finally:
        shutil.rmtree(runs, ignore_errors=True)
        os.sync()
        DELETION_MARKER.parent.mkdir(parents=True, exist_ok=True)  # a fresh clone has no benchmarks/out/
        DELETION_MARKER.write_text(f"{time.time()}\n")


def wait_after_deletion(marker: Path) -> None:
    """Write back earlier deletions, then wait until the last one noted in `marker` is DELETION_QUIET_S old."""
    os.sync()
    try:
        left = float(marker.read_text()) + DELETION_QUIET_S - time.time()
    except (FileNotFoundError, ValueError):
        return
    if left > 0:
        print(
            f"the last benchmark deleted its runs {DELETION_QUIET_S - left:.0f} s ago: waiting {left:.0f} s",
            file=sys.stderr,
        )
        time.sleep(left)


def file_creation_us(folder: Path, count: int = 2000) -> float:
    """Microseconds to create (and write 2 kB into) one new file in `folder`."""
    folder.mkdir(parents=True)
    started = time.perf_counter()
    for n in range(count):
        with open(folder / f"{n}.bin", "wb") as handle:
            handle.write(b"x" * 2048)
    return (time.perf_counter() - started) / count * 1e6


SETTLE_PAUSE_S = 30
SETTLE_PATIENCE_S = 90


def settle(probe: Path, limit_us: float = 60.0, patience_s: float = SETTLE_PATIENCE_S) -> float:
    """Wait until creating a file costs less than `limit_us` again (see `fresh_folders`), pausing at most
    `patience_s` in all; return the last cost. Recent deletions settle within that; another process that keeps
    creating files may not for as long as it runs, so the benchmark then measures anyway and prints the cost
    beside its figures (`file_creation_us` again, per case) instead of waiting on it."""
    waited = 0.0
    for attempt in itertools.count():
        cost = file_creation_us(probe / str(attempt))
        if cost < limit_us:
            print(f"file creation: {cost:.0f} us per file", file=sys.stderr)
            return cost
        if waited + SETTLE_PAUSE_S > patience_s:
            print(
                f"file creation still costs {cost:.0f} us per file (over {limit_us:.0f}) after {waited:.0f} s: "
                "measuring anyway; the figures carry that cost (printed beside them)",
                file=sys.stderr,
            )
            return cost
        print(
            f"file creation costs {cost:.0f} us per file (recent deletions?): waiting {SETTLE_PAUSE_S} s",
            file=sys.stderr,
        )
        time.sleep(SETTLE_PAUSE_S)
        waited += SETTLE_PAUSE_S


def pinned(command: list[str], cpus: str) -> list[str]:
    """The command restricted to the given CPUs when taskset exists."""
    return ["taskset", "-c", cpus, *command] if shutil.which("taskset") else command


def build_seconds(log: str) -> float | None:
    """The pipeline's own timing of plan + build (its 'wrote N entries in X s' line): start-up excluded."""
    found = re.search(r"wrote \d+ entries in ([0-9.]+) s", log)
    return float(found.group(1)) if found else None
