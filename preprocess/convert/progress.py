"""Progress of one conversion job: items done, rate and time left.

On a terminal the CLI draws a tqdm bar on standard error. Anywhere else (Snakemake's per-job log files,
SLURM output) it writes one plain line every `interval` seconds and a last one at the end, so that
`tail -f` on a log shows a long job moving.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

NARROW = "{n_fmt}/{total_fmt} {percentage:3.0f}% {rate_fmt} ETA {remaining} {desc}"


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

            # A terminal that reports no size (0x0, as a bare pseudo-terminal does) gets 80x24: tqdm would read
            # -1 rows there and draw nothing. Where the label and the bar do not fit, the counts come first (a
            # line cut at the terminal's width keeps them).
            columns = _columns(bar_stream)
            sized = columns > 0
            narrow = {"bar_format": NARROW} if (columns or 80) < len(label) + 55 else {}
            self._bar = tqdm(
                total=total,
                desc=label,
                unit="item",
                file=bar_stream,
                dynamic_ncols=sized,
                ncols=None if sized else 80,
                nrows=None if sized else 24,
                mininterval=0.2,
                **narrow,
            )

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


def _columns(stream) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):  # not a terminal, or no file descriptor (a StringIO)
        return 0


def terminal_stream():
    """Standard error when it is an interactive terminal (the CLI in a shell), else None."""
    return sys.stderr if sys.stderr.isatty() else None
