"""What a dropped or opened path means: a .py file is itself; a folder is the .py files under it
(sorted, sub-folders too), without hidden folders, caches, virtual environments and installed
packages (a project folder dropped whole should not drag its .venv in)."""

from __future__ import annotations

import os
from collections.abc import Iterable

MAX_FILES = 200  # a folder with more is not what the user meant: the first ones, and a note
SKIP_DIRS = {"__pycache__", "site-packages", "node_modules", "build", "dist"}


def _skipped(dirpath: str, name: str) -> bool:
    return (
        name.startswith(".")
        or name in SKIP_DIRS
        or name.endswith(".egg-info")
        or os.path.exists(os.path.join(dirpath, name, "pyvenv.cfg"))
    )


def op_files(paths: Iterable[str]) -> tuple[list[str], str]:
    """(the .py files `paths` stand for, absolute and in order; a note when a folder held more
    than MAX_FILES or nothing)."""
    out: list[str] = []
    notes = []
    for p in paths:
        p = os.path.abspath(p)
        if os.path.isfile(p):
            if p.endswith(".py") and p not in out:
                out.append(p)
            continue
        if not os.path.isdir(p):
            continue
        found = []
        for dirpath, dirnames, filenames in os.walk(p):
            dirnames[:] = sorted(d for d in dirnames if not _skipped(dirpath, d))
            found += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py")]
        if not found:
            notes.append(f"no .py files in {p}")
        elif len(found) > MAX_FILES:
            notes.append(f"{p}: the first {MAX_FILES} of {len(found)} .py files")
            found = found[:MAX_FILES]
        out += [f for f in found if f not in out]
    return out, "; ".join(notes)
