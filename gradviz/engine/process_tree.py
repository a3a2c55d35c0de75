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
_WALL = 0x40000000  # Linux's __WALL (not in the os module)


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


def has_children() -> bool:
    """Whether this process has a child (live or not yet waited for), started by any of its
    threads: one system call, where listing them reads a file per thread. True where unsure."""
    if not sys.platform.startswith("linux"):
        return True
    try:  # reaps nothing (WNOWAIT); __WALL: also children whose exit signal is not SIGCHLD
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT | _WALL)
    except ChildProcessError:
        return False
    except OSError:
        return True
    return True


def kill_descendants(rounds: int = 20) -> int:
    """SIGKILL every descendant; orphans come back to this subreaper as children, so repeat until
    none is left. Returns how many were killed."""
    killed = 0
    if not has_children():  # after nearly every request: nothing to look for
        return killed
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
                # no zombie left, a clone child's too (a Popen that waits later gets ECHILD: fine)
                os.waitpid(pid, _WALL)
            except ChildProcessError:
                pass
    return killed
