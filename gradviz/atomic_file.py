"""One atomic writer for every file gradviz hands the user (reports in gradviz/report.py, figures
in gradviz/qt/export/files.py): a temp file in the target's folder, flushed to disk, os.replace on
success, removed on any failure. The result has the mode a plain
open() would give: a new file follows the umask, a replaced file keeps its old mode (mkstemp's
private 0600 is for the temp file only)."""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import Iterator, Optional


def current_umask() -> int:
    """The process umask, read without changing it where the system says it (Linux); else by
    setting and restoring it at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def final_mode(path: str) -> int:
    """The permission bits `path` should end with: its own when it exists, else 0666 - umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o666 & ~current_umask()


@contextlib.contextmanager
def atomic_path(path: str, suffix: str = ".tmp", mode: Optional[int] = None) -> Iterator[str]:
    """Yield a temp path beside `path`; when the block ends normally the temp file is synced to
    disk, gets final_mode(path) and replaces `path` in one step; on any failure it is removed and
    `path` is left as it was."""
    path = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(path)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=suffix, dir=folder)
    os.close(fd)
    try:
        yield tmp
        _sync(tmp)
        os.chmod(tmp, final_mode(path) if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _sync(path: str) -> None:
    """Data on disk before the rename, so a crash never leaves a renamed but empty file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
