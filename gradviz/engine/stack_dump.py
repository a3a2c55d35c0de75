"""A worker's Python stack, asked for and read back: SIGUSR1 makes the child's faulthandler write
every thread's stack to its log, which the parent reads to point a hang or a memory hog at the
user's line."""

from __future__ import annotations

import os
import signal
import time


def request_stack(pid: int, log: str, alive, wait_s: float = 3.0, quiet_s: float = 0.1) -> None:
    """SIGUSR1 makes the child's faulthandler write every thread's stack to its log; wait until
    the log has grown and then stayed the same for `quiet_s` (the handler runs in C, even while
    Python code spins, but on a loaded machine it may write in bursts: one unchanged look is not
    the end of the dump, and a cut dump may lack the user's line)."""
    try:
        before = os.path.getsize(log)
        os.kill(pid, signal.SIGUSR1)
    except OSError:
        return
    end = time.monotonic() + wait_s
    last, same_since = before, None
    while time.monotonic() < end and alive():
        time.sleep(0.02)
        try:
            size = os.path.getsize(log)
        except OSError:
            return
        now = time.monotonic()
        if size != last:
            last, same_since = size, now
        elif size > before and now - same_since >= quiet_s:
            return


def read_log(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""
