"""Ctrl-C as one line: the command (or the rule's step) stops with INTERRUPTED, its forked workers quietly."""

from __future__ import annotations

import os
import signal

INTERRUPTED = "interrupted: rerun the same command to resume"


def interrupt_in_parent_only() -> None:
    """Ctrl-C reaches every process of the terminal's group: worker processes (forked, they inherit this
    handler) leave quietly, the command itself stops with one line instead of a traceback per process."""
    parent = os.getpid()

    def handler(signum, frame):
        if os.getpid() != parent:
            raise SystemExit(130)
        raise KeyboardInterrupt

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, handler)
