"""In-process timing for the per-item benchmarks (stage_costs.py, verify_shards.py): the calls measured, each
timed in turn within every repeat, and the scratch folder the measured files live in. (timing.py times whole
processes.)"""

from __future__ import annotations

import contextlib
import datetime
import shutil
import time
from pathlib import Path


def samples(repeats: int, *runs, before=None) -> list[list[float]]:
    """The wall seconds of each of `runs`, one list a run: every repeat first calls `before` (untimed, when
    given), then times each run in turn, so each sees the caches its neighbours leave as in every repeat."""
    found = [[] for _ in runs]
    for _ in range(repeats):
        if before is not None:
            before()
        for seconds, run in zip(found, runs, strict=True):
            started = time.perf_counter()
            run()
            seconds.append(time.perf_counter() - started)
    return found


@contextlib.contextmanager
def scratch(out: Path):
    """A new folder under `out`, named by the time, for the files a benchmark measures on; deleted at the end."""
    folder = out / datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)
