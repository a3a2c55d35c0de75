"""The files `gradviz run` writes (--json, --npz, --plot), checked before any worker starts: an
empty path, an output that is one of the run's input files (`--json ops.py` overwrote the op
file and exited 0), or two outputs at one file (`--json x --npz x` kept only one) are refused
with exit 2. A device, FIFO, pipe or terminal may be named by any of them: it is written
through, never replaced (gradviz/atomic_file.py), and two outputs may share one (/dev/null)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence


def _identity(path: str) -> tuple | None:
    """What two names of one file share: (device, inode) of an existing regular file, the real
    path of one to be made; None for a device, FIFO or pipe (written through, never clobbered)."""
    try:
        st = os.stat(path)
    except OSError:  # not there (yet): the file it would make
        return ("new", os.path.realpath(path))
    if not stat.S_ISREG(st.st_mode):
        return None
    return ("file", st.st_dev, st.st_ino)


def output_problems(outputs: Sequence[tuple[str, str | None]], inputs: Sequence[str]) -> list[str]:
    """outputs: (flag, path or None) pairs; inputs: the run's op files. One message per problem."""
    wrong: list[str] = []
    inputs_by_id = {}
    for path in inputs:
        ident = _identity(path)
        if ident is not None:
            inputs_by_id[ident] = path
    seen: dict[tuple, str] = {}
    for flag, path in outputs:
        if path is None:
            continue
        if not path.strip():
            wrong.append(f"{flag} '{path}': the path is empty; name the file to write")
            continue
        ident = _identity(path)
        if ident is None:
            continue
        if ident in inputs_by_id:
            wrong.append(
                f"{flag} {path}: that is the op file {inputs_by_id[ident]}, an input of "
                "this run; it would be overwritten"
            )
        elif ident in seen:
            wrong.append(
                f"{flag} {path}: {seen[ident]} writes that file already; give each "
                "output its own file"
            )
        else:
            seen[ident] = flag
    return wrong
