"""Which frames of a traceback or a stack dump are the user's code, not gradviz's, a framework's or
the standard library's. Used in the workers (errors at the user's line) and in the parent (a
crash's faulthandler dump read back), so it imports no backend and no framework."""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import traceback

import gradviz
from gradviz.bundled import EXAMPLES_DIR

_GRADVIZ_DIR = os.path.dirname(os.path.abspath(gradviz.__file__))
# The built-in examples are the user's side even when a wheel installs them inside gradviz
_EXAMPLES_DIR = os.path.abspath(EXAMPLES_DIR)
_LIBRARY_DIRS = tuple(
    {
        os.path.abspath(p)
        for p in (
            sysconfig.get_paths()["stdlib"],
            sysconfig.get_paths()["purelib"],
            sysconfig.get_paths()["platlib"],
            sys.prefix,
            sys.base_prefix,
        )
        if p
    }
)


def is_user_frame(filename: str) -> bool:
    """A frame in the user's own code: not gradviz, not the frameworks, not the standard library.
    User files are Python sources imported by absolute path: a relative name or a `.pyx` (numpy's
    `bit_generator.pyx`) is a compiled library's."""
    if not filename or not os.path.isabs(filename) or not filename.endswith(".py"):
        return False
    path = os.path.abspath(filename)
    if path.startswith(_EXAMPLES_DIR + os.sep):
        return True
    if path.startswith(_GRADVIZ_DIR + os.sep):
        return False
    if "site-packages" in path or "dist-packages" in path:
        return False
    return not any(path.startswith(d + os.sep) for d in _LIBRARY_DIRS)


def in_gradviz(filename: str) -> bool:
    """A frame in gradviz's own package (the built-in examples there are the user's)."""
    if not filename or not os.path.isabs(filename):
        return False
    path = os.path.abspath(filename)
    return path.startswith(_GRADVIZ_DIR + os.sep) and not path.startswith(_EXAMPLES_DIR + os.sep)


_CHILD_LOOP = os.path.join(_GRADVIZ_DIR, "engine", "child.py")  # a worker's request loop
_DUMP_FRAME = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+) in (?P<fn>.+?)\s*$')


def locate_in_stack_dump(text: str) -> tuple[str, str]:
    """(where, traceback) from a faulthandler dump: the innermost user frame as "file:line", and
    the user's frames in the usual outermost-first order. ("", "") when no user frame is there.

    faulthandler lists the most recent call first, one block per thread. The user's code may
    start threads of its own (a sleeping one has user frames too): the block of the thread that
    serves requests (engine/child.py at its bottom) wins, else the first block with user frames."""
    blocks: list[tuple[list, bool]] = []  # (user frames, innermost first; serves requests)
    for line in text.splitlines():
        m = _DUMP_FRAME.match(line)
        if not m:
            if line.strip():
                blocks.append(([], False))  # a thread's header line
            continue
        if not blocks:
            blocks.append(([], False))
        frames = blocks[-1][0]
        if is_user_frame(m["file"]):
            frames.append((m["file"], int(m["line"]), m["fn"]))
        elif os.path.abspath(m["file"]) == _CHILD_LOOP:
            blocks[-1] = (frames, True)
    with_user = [b for b in blocks if b[0]]
    if not with_user:
        return "", ""
    block = next((f for f, serving in with_user if serving), with_user[0][0])
    where = f"{block[0][0]}:{block[0][1]}"
    tb = "".join(
        traceback.format_list([traceback.FrameSummary(f, n, fn) for f, n, fn in reversed(block)])
    )
    return where, tb


def crashed_in_a_user_thread(text: str) -> bool:
    """A fatal-error dump (faulthandler writes the crashing thread only) whose thread is not the
    one serving requests but has user frames: a thread the user's code started crashed the
    worker, whatever op was running then (an earlier op's thread blamed on the running one)."""
    if "Fatal Python error" not in text:
        return False
    dump = text[text.index("Fatal Python error") :]
    frames = [m for m in map(_DUMP_FRAME.match, dump.splitlines()) if m]
    return any(is_user_frame(m["file"]) for m in frames) and not any(
        os.path.abspath(m["file"]) == _CHILD_LOOP for m in frames
    )
