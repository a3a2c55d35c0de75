"""A worker's ties to other processes (Linux; elsewhere these do nothing and the Worker's process
group kill and the worker's parent watch remain).

- it dies with its parent, even while the user's code spins in native code (PR_SET_PDEATHSIG);
- it adopts the orphans of what the user's code started (PR_SET_CHILD_SUBREAPER), so that after
  each request every process the op left behind can be found among its children and killed: a
  forward that calls `subprocess.Popen(["sleep", ...])` runs ~800 times in numeric mode.
"""
from __future__ import annotations

import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(parent_pid: int) -> None:
    """SIGKILL this process when its parent ends; exit now if the parent is gone already."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # it died before the prctl took effect
        os._exit(0)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def children() -> list[int]:
    """Live child processes of this process, started by any of its threads."""
    found: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children") as fh:
                found.extend(int(p) for p in fh.read().split())
        except (OSError, ValueError):
            continue
    return found


def kill_descendants(rounds: int = 20) -> int:
    """SIGKILL every descendant; orphans come back to this subreaper as children, so repeat until
    none is left. Returns how many were killed."""
    killed = 0
    for _ in range(rounds):
        pids = children()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        for pid in pids:
            try:
                os.waitpid(pid, 0)  # no zombie left (a Popen that waits later gets ECHILD: fine)
            except ChildProcessError:
                pass
    return killed
