"""The app's numeric pass at a lower CPU priority, every thread of the worker included.

On Linux a nice value belongs to a thread, not a process: lowering only the calling thread left
TensorFlow's own thread pool, which does about half of a 10^6-element TF forward, at the normal
priority, competing with the window that paints the custom and default gradients meanwhile.
And it ranks a thread only within its scheduling group: under autogroup scheduling a worker, in a
session of its own (engine/worker.py), is a group of its own, and this lowers it against the
window not at all (ARCHITECTURE.md, "Progressive results").
"""

from __future__ import annotations

import contextlib
import os
import resource

LOW = 10


def thread_ids() -> list[int]:
    """Every thread of this process, or [0] (this thread) where they cannot be listed."""
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except (OSError, ValueError):
        return [0]


@contextlib.contextmanager
def background_priority():
    """Run the numeric reference at a lower CPU priority: in the app it runs while the window
    paints the custom and default gradients the user is waiting for. Only where the priority can
    be restored afterwards (root, or RLIMIT_NICE allows it), and only for the app's second pass:
    on a machine busy with other work it made the numeric pass ~3x slower. Threads started
    meanwhile (they inherit the low value) get this thread's priority back too."""
    olds: dict[int, int] = {}
    try:
        old = os.getpriority(os.PRIO_PROCESS, 0)
        floor = 20 - resource.getrlimit(resource.RLIMIT_NICE)[0]
        lowered = (os.geteuid() == 0 or floor <= old) and old < LOW
        if lowered:
            for tid in thread_ids():
                try:
                    olds[tid] = os.getpriority(os.PRIO_PROCESS, tid)
                    if olds[tid] < LOW:
                        os.setpriority(os.PRIO_PROCESS, tid, LOW)
                except OSError:  # the thread has ended meanwhile
                    olds.pop(tid, None)
    except (OSError, AttributeError, ValueError):
        lowered = False
    try:
        yield
    finally:
        if lowered:
            for tid in thread_ids():
                try:
                    os.setpriority(os.PRIO_PROCESS, tid, olds.get(tid, old))
                except OSError:
                    pass
