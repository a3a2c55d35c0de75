"""What cleans up after a gradviz killed with SIGKILL: a small process started beside the first
worker, holding the read end of a pipe whose write end only gradviz holds. When gradviz ends,
however it ends, the pipe reaches its end; the janitor then kills what is left of the workers'
process groups (they die with their parent, but the processes the user's ops started do not),
waits until the workers are gone, and removes every scratch folder of that gradviz in
scratch.ROOT (`gradviz-PID-*`, this user's). Nothing is left in /dev/shm, not even an empty
folder, and the next start has nothing to sweep (issue 26, item 6).

The janitor is its own session (no terminal signal reaches it), imports nothing of gradviz or
of the user's, and after a normal exit finds nothing to remove."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

_SCRIPT = r"""
import os, re, shutil, signal, stat, sys, time
root, parent = sys.argv[1], sys.argv[2]
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
groups = []
for line in sys.stdin:                       # until gradviz ends: "+PID" a worker, "-PID" reaped
    word = line.strip()
    if word[1:].isdigit():
        (groups.append if word[0] == "+" else lambda g: g in groups and groups.remove(g))(int(word[1:]))
def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False
for g in groups:
    try:
        os.killpg(g, signal.SIGKILL)         # the group lives while any member does: no reuse
    except OSError:
        pass
end = time.monotonic() + 5
while any(alive(g) for g in groups) and time.monotonic() < end:
    time.sleep(0.01)
ours = re.compile(r"gradviz-%s-" % re.escape(parent))
try:
    names = os.listdir(root)
except OSError:
    names = []
for name in names:
    path = os.path.join(root, name)
    try:
        st = os.lstat(path)
    except OSError:
        continue
    if ours.match(name) and stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid():
        shutil.rmtree(path, ignore_errors=True)
"""

_lock = threading.Lock()
_janitor: subprocess.Popen | None = None


def watch(worker_pid: int | None = None, reaped: bool = False) -> None:
    """Make sure this process has a janitor; with `worker_pid`, tell it of a worker (its pid is
    its process group's), or with `reaped` that the worker was reaped (its group id may be
    reused from now on). Never raises: without a janitor, the next start's sweep remains."""
    global _janitor
    from gradviz.engine import scratch

    with _lock:
        try:
            if _janitor is None or _janitor.poll() is not None:
                _janitor = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", _SCRIPT, scratch.ROOT, str(os.getpid())],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    close_fds=True,
                )
            if worker_pid is not None:
                _janitor.stdin.write(f"{'-' if reaped else '+'}{worker_pid}\n".encode())
                _janitor.stdin.flush()
        except OSError:
            pass


def pid() -> int | None:
    """The janitor's pid (tests wait for it to end)."""
    return _janitor.pid if _janitor is not None else None
