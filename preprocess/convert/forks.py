"""Forking with Ctrl-C held: a process forked while the terminal's SIGINT is on its way would meet it inside
the interpreter's after-fork hooks, where the raised exit is printed as "Exception ignored ... Traceback"
(pipeline/interrupts.py's handler raises in a forked process). The parent holds the signal while it forks; each
forked process lets it through in its own code, where it ends quietly; the parent meets it after the forks."""

from __future__ import annotations

import contextlib
import signal


@contextlib.contextmanager
def ctrl_c_held():
    """In the parent, around the calls that fork."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def let_ctrl_c_through() -> None:
    """In a forked process, first thing in its own code."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
