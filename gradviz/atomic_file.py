"""One atomic writer for every file gradviz hands the user (reports in gradviz/report.py, figures
in gradviz/qt/export/files.py): a temp file in the target's folder, flushed to disk, os.replace on
success, removed on any failure. The result has the mode a plain
open() would give: a new file follows the umask, a replaced file keeps its old mode (mkstemp's
private 0600 is for the temp file only). Only a regular file is ever replaced: a device, FIFO,
pipe or terminal is written through (issue 26, item 2)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator


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


NAME_MAX = 255  # bytes of one file name on the file systems gradviz writes to
_TEMP_STEM = 100  # bytes of the target's name kept in its temp file's name


@contextlib.contextmanager
def atomic_path(path: str, suffix: str = ".tmp", mode: int | None = None) -> Iterator[str]:
    """Yield a temp path to write; when the block ends normally the temp file is synced to disk,
    gets final_mode(path) (or `mode`) and replaces `path` in one step; on any failure it is removed
    and `path` is left as it was.

    Only a regular file (or no file) is replaced, and a link is followed to the file it names:
    a device, FIFO, pipe or terminal at `path` (`/dev/null`, `/dev/stdout`, `>(jq .)`) is written
    through instead, from a private temp file once it is complete. An empty path is refused."""
    if not os.fspath(path):
        raise ValueError("the output path is empty")
    path = os.path.abspath(os.fspath(path))
    through = _is_special(path)
    if not through:  # a link to a file: replace the file it names
        path = os.path.realpath(path)
    folder, name = os.path.split(path)
    if through:
        folder = tempfile.mkdtemp(prefix="gradviz-out-")  # 0700, private
    elif not os.path.isdir(folder):
        raise FileNotFoundError(f"folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{_stem(name)}.", suffix=suffix, dir=folder)
    os.close(fd)
    try:
        yield tmp
        if through:
            _copy_into(tmp, path)
        else:
            _sync(tmp)
            os.chmod(tmp, final_mode(path) if mode is None else mode)
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    finally:
        if through:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            with contextlib.suppress(OSError):
                os.rmdir(folder)


def _is_special(path: str) -> bool:
    """True when something other than a regular file sits at `path` (after links)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return False


def _stem(name: str) -> str:
    """The target's name cut so that its temp file's name stays within NAME_MAX."""
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) <= _TEMP_STEM:
        return name
    return raw[:_TEMP_STEM].decode("utf-8", "ignore")


def _copy_into(tmp: str, path: str) -> None:
    """Write the complete temp file into the device / FIFO / pipe at `path` (never creating,
    replacing or truncating anything on disk)."""
    if stat.S_ISDIR(os.stat(path).st_mode):
        raise IsADirectoryError(f"{path} is a folder")
    out = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        with open(tmp, "rb") as f:
            while chunk := f.read(1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view) :]
    finally:
        os.close(out)


def _sync(path: str) -> None:
    """Data on disk before the rename, so a crash never leaves a renamed but empty file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
