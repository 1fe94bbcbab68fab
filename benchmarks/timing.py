"""Helpers the benchmark scripts share: whole-process timing and CPU pinning."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path


def timed(command: list[str], clean: Path) -> float:
    """Wall seconds of one run of `command`, after removing its previous output folder `clean`."""
    shutil.rmtree(clean, ignore_errors=True)
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def pinned(command: list[str], cpus: str) -> list[str]:
    """The command restricted to the given CPUs when taskset exists."""
    return ["taskset", "-c", cpus, *command] if shutil.which("taskset") else command
