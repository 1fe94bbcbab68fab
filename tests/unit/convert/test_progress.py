"""Progress of long jobs: plain lines at a steady interval in logs, a bar on a terminal."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios

from conftest import REPO, demo_config_file
from preprocess.convert.progress import Progress

LINE = re.compile(
    r"progress (?P<label>\S+ shard \d+/\d+): (?P<done>[\d,]+)/(?P<total>[\d,]+) items \((?P<percent>[\d.]+)%\), "
    r"(?P<rate>[\d,.]+) items/s, elapsed \d+:\d\d:\d\d, ETA (?P<eta>\d+:\d\d:\d\d)"
)


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_come_at_the_interval_with_rate_and_eta():
    clock, lines = FakeClock(), []
    progress = Progress("2D_Task/X/convert shard 1/1", 1000, lines.append, interval=10, clock=clock)
    for _ in range(100):  # 10 items per second for 100 s
        clock.now += 1
        progress.advance(10)
    progress.close()
    # one line each 10 s while running (the last one is the closing line), none in between
    assert len(lines) == 10
    first = LINE.match(lines[0])
    assert first and first["done"] == "100" and first["total"] == "1,000" and first["percent"] == "10.0"
    assert first["rate"] == "10.0"
    assert first["eta"] == "0:01:30"  # 900 items left at 10 items/s
    last = LINE.match(lines[-1])
    assert last["done"] == "1,000" and last["percent"] == "100.0" and last["eta"] == "0:00:00"


def test_a_quick_job_writes_only_its_closing_line():
    clock, lines = FakeClock(), []
    progress = Progress("a shard 1/1", 3, lines.append, interval=10, clock=clock)
    progress.advance(3)
    progress.close()
    assert len(lines) == 1 and LINE.match(lines[0])["done"] == "3"


def test_a_bar_instead_of_lines_on_a_terminal():
    stream, lines = io.StringIO(), []
    progress = Progress("a shard 1/1", 4, lines.append, interval=0, bar_stream=stream)
    for _ in range(4):
        progress.advance()
    progress.close()
    assert lines == []
    assert "4/4" in stream.getvalue() and "item/s" in stream.getvalue()


def _convert_blood(demo, tmp_path, stderr) -> subprocess.CompletedProcess:
    config = demo_config_file(demo, tmp_path / "config.yaml", progress_interval=0)
    command = [sys.executable, "-m", "preprocess", "convert", "BloodMNIST", "--config", str(config)]
    command += ["--results", str(tmp_path / "results")]
    return subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, stderr=stderr, text=True, check=True)


def test_the_cli_writes_plain_lines_when_not_on_a_terminal(demo, tmp_path):
    done = _convert_blood(demo, tmp_path, subprocess.PIPE)
    found = [LINE.search(line) for line in (done.stdout + done.stderr).splitlines()]
    counts = [int(m["done"].replace(",", "")) for m in found if m]
    assert len(counts) >= 2 and counts == sorted(counts)
    total = int(next(m for m in found if m)["total"])
    assert counts[-1] == total > 0
    assert "\r" not in done.stdout + done.stderr


def _drawn_on_a_terminal(demo, tmp_path, columns: int | None) -> tuple[str, subprocess.CompletedProcess]:
    """What the CLI draws on a pseudo-terminal of `columns` (None: one that reports no size, 0x0)."""
    controller, terminal = pty.openpty()
    if columns is not None:
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    try:
        done = _convert_blood(demo, tmp_path, terminal)
        os.close(terminal)
        terminal = None
        drawn = b""
        try:
            while chunk := os.read(controller, 65536):
                drawn += chunk
        except OSError:  # the terminal side is closed: everything is read
            pass
    finally:
        os.close(controller)
        if terminal is not None:
            os.close(terminal)
    return drawn.decode("utf-8", "replace"), done


def test_the_cli_draws_a_bar_on_a_terminal(demo, tmp_path):
    bar, done = _drawn_on_a_terminal(demo, tmp_path, 100)
    assert "\r" in bar and "item/s" in bar and "2D_Task/BloodMNIST/npz_unpack_2d" in bar
    assert not LINE.search(done.stdout)  # the bar replaces the lines


def test_the_bar_draws_on_a_terminal_that_reports_no_size(demo, tmp_path):
    bar, _ = _drawn_on_a_terminal(demo, tmp_path, None)
    assert "item/s" in bar and "2D_Task/BloodMNIST/npz_unpack_2d" in bar
    assert re.search(r"(\d+)/\1 100%", bar)  # the last state: every item done


def test_a_narrow_terminal_still_shows_the_counts(demo, tmp_path):
    bar, _ = _drawn_on_a_terminal(demo, tmp_path, 24)
    states = [s for s in re.split(r"[\r\n]+", bar) if s.strip()]
    assert states and all(len(s) <= 24 for s in states)
    assert re.match(r"(\d+)/\1 100%", states[-1])  # items done / total lead the line
