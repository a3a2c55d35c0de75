"""Private scratch folders for what a worker shares with its parent: big arrays, its crash log.

Another local user must not predict, plant, read or redirect these files. Each worker gets a
fresh 0700 folder (mkdtemp: a random name, an exclusive mkdir) in /dev/shm; files in it are
created O_EXCL|O_NOFOLLOW with mode 0600 and read back O_NOFOLLOW, after checking that this user
owns them. The folder name carries the parent's pid: a gradviz killed with SIGKILL has no chance
to clean up, so the folders of dead pids are swept at the next start.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import tempfile
import threading

ROOT = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else \
    tempfile.gettempdir()
_OURS = re.compile(r"gradviz-(\d+)-")                 # a scratch folder: gradviz-PID-TAG-RANDOM
_OLD_ARRAY = re.compile(r"gradviz-(\d+)-\d+\.npy")     # arrays of gradviz before private folders
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_swept = threading.Event()


def new_folder(tag: str) -> str:
    """A fresh folder only this user can enter, named after this process."""
    return tempfile.mkdtemp(prefix=f"gradviz-{os.getpid()}-{tag}-", dir=ROOT)


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
    """Remove this user's scratch folders (and old-style array files) whose gradviz is dead.
    Runs once per process; returns what it removed."""
    if _swept.is_set():
        return []
    _swept.set()
    removed = []
    for root in {ROOT, tempfile.gettempdir()}:
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for entry in entries:
            if _is_stale(entry):
                if entry.is_dir(follow_symlinks=False):
                    remove(entry.path)
                else:
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        continue
                removed.append(entry.path)
    return removed


def _is_stale(entry: os.DirEntry) -> bool:
    folder = _OURS.match(entry.name)
    old_array = _OLD_ARRAY.fullmatch(entry.name)
    if not (folder or old_array):
        return False
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    if st.st_uid != os.geteuid():
        return False  # another user's (or planted): not ours to judge
    if old_array:
        ok = stat.S_ISREG(st.st_mode)
    else:
        ok = stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
    return ok and not _alive(int((old_array or folder).group(1)))


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
