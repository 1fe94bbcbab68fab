"""Progress of one conversion job: items done, rate and time left.

On a terminal the CLI draws a tqdm bar on standard error. Anywhere else (Snakemake's per-job log files,
SLURM output) it writes one plain line every `interval` seconds and a last one at the end, so that
`tail -f` on a log shows a long job moving.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable


def _clock_text(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    def __init__(
        self,
        label: str,
        total: int,
        log: Callable[[str], None] = print,
        interval: float = 10.0,
        bar_stream=None,
        clock: Callable[[], float] = time.monotonic,
    ):
        """`bar_stream`: draw a tqdm bar there instead of writing lines (None: lines)."""
        self.label, self.total, self.done = label, total, 0
        self._log, self._interval, self._clock = log, interval, clock
        self._started = self._last = clock()
        self._bar = None
        if bar_stream is not None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=label, unit="item", file=bar_stream, dynamic_ncols=True)

    def advance(self, count: int = 1) -> None:
        self.done += count
        if self._bar is not None:
            self._bar.update(count)
            return
        now = self._clock()
        if now - self._last >= self._interval and self.done < self.total:
            self._last = now
            self._log(self.line(now))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self.total:
            self._log(self.line(self._clock()))

    def line(self, now: float) -> str:
        elapsed = max(now - self._started, 1e-9)
        rate = self.done / elapsed
        percent = 100.0 * self.done / self.total if self.total else 100.0
        left = (self.total - self.done) / rate if rate > 0 else None
        eta = "unknown" if left is None else _clock_text(left)
        return (
            f"progress {self.label}: {self.done:,}/{self.total:,} items ({percent:.1f}%), "
            f"{rate:,.1f} items/s, elapsed {_clock_text(elapsed)}, ETA {eta}"
        )


def terminal_stream():
    """Standard error when it is an interactive terminal (the CLI in a shell), else None."""
    return sys.stderr if sys.stderr.isatty() else None
