"""Private scratch folders for what a worker shares with its parent: big arrays, its crash log.

Another local user must not predict, plant, read or redirect these files. Each worker gets a
fresh 0700 folder (mkdtemp: a random name, an exclusive mkdir) in /dev/shm; files in it are
created O_EXCL|O_NOFOLLOW with mode 0600 and read back O_NOFOLLOW, after checking that this user
owns them. The folder name carries the parent's pid: a gradviz killed with SIGKILL has no chance
to clean up, so the folders of dead pids are swept at the next start.

Older gradviz versions left crash logs at `/tmp/gradviz-torch-XXXXXXXX.log` (`tempfile.mkstemp`,
no pid in the name; the worker held the file open while it lived). Those are swept too, once no
live process has the file open and it has not changed for a minute (its gradviz may be reading
a crash just written); where open files cannot be listed (no /proc), they are left alone.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import tempfile
import threading
import time

from gradviz.errors import GradvizError

ROOT = (
    "/dev/shm"
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK)
    else tempfile.gettempdir()
)
_OURS = re.compile(r"gradviz-(\d+)-")  # a scratch folder: gradviz-PID-TAG-RANDOM
_OLD_ARRAY = re.compile(r"gradviz-(\d+)-\d+\.npy")  # arrays of gradviz before private folders
_OLD_LOG = re.compile(r"gradviz-(?:torch|tf)-[a-z0-9_]{8}\.log")  # crash logs of the same era
OLD_LOG_QUIET_S = 60.0
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_swept = threading.Event()


class ScratchUnavailable(GradvizError, OSError):
    """No scratch folder can be made (the file system is full, out of inodes, or read-only)."""


def new_folder(tag: str) -> str:
    """A fresh folder only this user can enter, named after this process."""
    try:
        return tempfile.mkdtemp(prefix=f"gradviz-{os.getpid()}-{tag}-", dir=ROOT)
    except OSError as exc:
        raise ScratchUnavailable(
            exc.errno,
            f"cannot make a scratch folder for the workers in {ROOT}: "
            f"{exc.strerror or exc} (full, out of inodes or read-only?); free some room there "
            "and start gradviz again",
        ) from None


def create(path: str) -> int:
    """A new file for writing; fails if anything (a file, a planted symlink) is there already."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)


def open_owned(path: str) -> int:
    """Open for reading a regular file this user owns and nobody else may write to."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        os.close(fd)
        raise PermissionError(errno.EPERM, "not a private file of this user", path)
    return fd


def remove(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)  # rmtree unlinks symlinks, never follows them


def sweep_stale() -> list[str]:
    """Remove this user's scratch folders, old-style array files and old crash logs whose
    gradviz is dead. Runs once per process; returns what it removed."""
    if _swept.is_set():
        return []
    _swept.set()
    return sweep({ROOT, tempfile.gettempdir(), "/tmp"})


def sweep(roots) -> list[str]:
    """The sweep itself, over the folders `roots`."""
    removed, old_logs = [], []
    for root in sorted(roots):
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for entry in entries:
            if _OLD_LOG.fullmatch(entry.name):
                old_logs.append(entry)
            elif _is_stale(entry):
                if entry.is_dir(follow_symlinks=False):
                    remove(entry.path)
                elif not _unlink(entry.path):
                    continue
                removed.append(entry.path)
    return removed + [e.path for e in _unheld_old_logs(old_logs) if _unlink(e.path)]


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)  # a symlink would be unlinked itself, never its target
    except OSError:
        return False
    return True


def _is_stale(entry: os.DirEntry) -> bool:
    folder = _OURS.match(entry.name)
    old_array = _OLD_ARRAY.fullmatch(entry.name)
    if not (folder or old_array):
        return False
    st = _own_stat(entry)
    if st is None:
        return False  # another user's (or planted): not ours to judge
    if old_array:
        ok = stat.S_ISREG(st.st_mode)
    else:
        ok = stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
    return ok and not _alive(int((old_array or folder).group(1)))


def _own_stat(entry: os.DirEntry):
    """The entry's own stat (a symlink's, not its target's) when this user owns it, else None."""
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return st if st.st_uid == os.geteuid() else None


def _unheld_old_logs(entries: list) -> list:
    """The old crash logs (this user's regular files, quiet for a minute) that no live process
    has open: their writer, the worker, is gone."""
    now = time.time()
    ours = {}
    for e in entries:
        st = _own_stat(e)
        if st is not None and stat.S_ISREG(st.st_mode) and now - st.st_mtime >= OLD_LOG_QUIET_S:
            ours[(st.st_dev, st.st_ino)] = e
    if not ours:
        return []
    held = _open_files()
    if held is None:
        return []  # cannot tell whether a writer lives: keep them
    return [e for key, e in ours.items() if key not in held]


def _open_files():
    """(device, inode) of every file this user's processes have open; None without /proc."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    held = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        fds = f"/proc/{pid}/fd"
        try:
            names = os.listdir(fds)
        except OSError:
            continue  # gone meanwhile, or another user's process: it cannot hold our 0600 file
        for fd in names:
            try:
                st = os.stat(os.path.join(fds, fd))
            except OSError:
                continue
            held.add((st.st_dev, st.st_ino))
    return held


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # alive, another user's
        return True
    return True
