"""Running user code inside a worker: capturing output, locating errors (loading the files:
backends/user_modules.py).

Framework-free; used by both backends.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import traceback
import types
import warnings
from dataclasses import dataclass, field

from gradviz.backends.capture_pipe import sink
from gradviz.model import ErrorInfo
from gradviz.user_frames import in_gradviz, is_user_frame
from gradviz.vocab import ErrorKind

# What user code may raise and gradviz reports at the user's line: also sys.exit() and a
# KeyboardInterrupt raised by hand (the worker ignores SIGINT, so none comes from outside).
USER_FAILURES = (Exception, SystemExit, KeyboardInterrupt)


def error_info(
    exc: BaseException, kind: str = ErrorKind.ERROR, fallback_where: str = ""
) -> ErrorInfo:
    """ErrorInfo naming the innermost user frame; the traceback keeps the user's frames only."""
    frames = list(traceback.extract_tb(_user_tb(exc.__traceback__)))
    # a check that found the user's mistake after the user's frame had returned names it itself
    frames = frames or list(getattr(exc, "user_frames", []))
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else fallback_where
    if isinstance(exc, SyntaxError) and exc.filename and is_user_frame(exc.filename):
        where = f"{exc.filename}:{exc.lineno or 0}"
    tb = "".join(traceback.format_list(frames)) if frames else ""
    message = (
        str(exc)
        if not isinstance(exc, SystemExit)
        else (f"user code called sys.exit({exc.code!r})")
    )
    if isinstance(exc, SystemExit) and kind == ErrorKind.ERROR:
        kind = (
            ErrorKind.CRASHED
        )  # the worker survives it, but to the user it is an exit like os._exit
    if isinstance(exc, SyntaxError):
        message = f"{exc.msg}" + (f": {exc.text.strip()}" if exc.text else "")
    message = _strip_framework_noise(message)
    if not frames and "returned an incorrect number of gradients" in message:
        where = _return_statement(where)  # torch checks it in C++: blame the user's return
    return ErrorInfo(type(exc).__name__, message or type(exc).__name__, where, tb, kind)


def _user_tb(tb):
    """The traceback `tb` with the user's frames only (None if none), so that extract_tb reads
    source lines and positions for those alone: a torch.func or TF error passes through dozens
    of framework frames, and reading them all was most of the time of a check that the
    framework refuses. The frames kept are extracted exactly as from `tb`."""
    kept = []
    while tb is not None:
        if is_user_frame(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def load_error(exc: BaseException, path: str) -> ErrorInfo:
    """ErrorInfo of the file `path` that failed to import: at the innermost line of the chain of
    imports in the user's files (for a library's module given by name: in its package's files),
    with that chain as the traceback; the line of a library where the error was raised, if any,
    is in the message. Line 1 of `path` only when no such frame is in the traceback."""
    original = getattr(exc, "original", None)  # user_modules.PackageInitError
    top = _top_folder(path)
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if is_user_frame(f.filename) or (top and _inside(f.filename, top))
    ]
    info = error_info(exc, ErrorKind.LOAD, f"{path}:1")
    if frames and not is_user_frame(path):
        info = ErrorInfo(
            info.type,
            info.message,
            f"{frames[-1].filename}:{frames[-1].lineno}",
            "".join(traceback.format_list(frames)),
            info.kind,
        )
    raised = _raised_in_library(original or exc)
    message = info.message + (f" (raised at {raised})" if raised and raised != info.where else "")
    kind = type(original).__name__ if original is not None else info.type
    return ErrorInfo(kind, message, info.where, info.traceback, info.kind)


def _top_folder(path: str) -> str:
    from gradviz.module_files import package_module

    package = package_module(path)
    return os.path.join(package[0], package[1].split(".")[0]) if package else ""


def _inside(filename: str, folder: str) -> bool:
    return os.path.isabs(filename) and os.path.abspath(filename).startswith(folder + os.sep)


def _raised_in_library(exc: BaseException) -> str:
    """'file:line' of the innermost frame of a library's own source, when the error was raised
    there (an import inside an installed package that failed); "" otherwise."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    if (
        is_user_frame(last.filename)
        or not last.filename.endswith(".py")
        or not os.path.isabs(last.filename)
        or in_gradviz(last.filename)
    ):
        return ""
    return f"{last.filename}:{last.lineno}"


def _return_statement(where: str) -> str:
    """For "file:N" at a `def`, the line of that function's only `return`; else `where` itself."""
    import ast

    path, _, line = where.rpartition(":")
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        n = int(line)
    except (OSError, ValueError, SyntaxError):
        return where
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            node.lineno == n or any(d.lineno == n for d in node.decorator_list)
        ):
            returns = [r for r in ast.walk(node) if isinstance(r, ast.Return)]
            return f"{path}:{returns[0].lineno}" if len(returns) == 1 else where
    return where


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TF_NODE = re.compile(r"\{\{function_node [^}]*\}\}\s*|\s*\[Op:\w+\]( name: \S*)?")


def _strip_framework_noise(message: str) -> str:
    # TF appends long op tracebacks ("Traceback for operation ...") and node names, Keras colours
    # its messages; keep the first lines, in plain text.
    message = _TF_NODE.sub(" ", _ANSI.sub("", message))
    lines = [ln.rstrip() for ln in message.strip().splitlines() if ln.strip()]
    keep = []
    for ln in lines:
        if ln.startswith(("Traceback", "  File ", "[[{{node")) or re.match(r"^\s*\[Op:", ln):
            break
        keep.append(ln)
    text = "\n".join(keep[:8]) if keep else (lines[0] if lines else "")
    return text


@dataclass
class Captured:
    log: str = ""
    warnings: list[str] = field(default_factory=list)


@contextlib.contextmanager
def capture_output():
    """Capture stdout/stderr at the file-descriptor level (C extensions too) and warnings. They
    go to a pipe whose reader keeps the head and tail and counts the rest (capture_pipe.py)."""
    cap = Captured()
    streams = sys.stdout, sys.stderr
    _flush_std_streams()
    saved = os.dup(1), os.dup(2)
    pipe = sink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fd = pipe.begin()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        try:
            yield cap
        finally:
            _flush_std_streams()
            # the user's code may have closed or replaced them; the worker writes to them later
            sys.stdout, sys.stderr = _open_stream(streams[0], 1), _open_stream(streams[1], 2)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            cap.log = pipe.end()
            cap.warnings = _dedupe([_format_warning(w) for w in caught])


def _flush_std_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):  # None, closed, or not a file at all
            pass


def _open_stream(stream, fd: int):
    """`stream` if it can still be written, else a fresh text stream on `fd` (not owning it)."""
    if stream is not None and not getattr(stream, "closed", True):
        return stream
    return open(fd, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)


def _dedupe(lines: list[str]) -> list[str]:
    """One entry per distinct warning, in first-seen order, with its count when repeated."""
    counts: dict[str, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    return [line if n == 1 else f"{line} (x{n})" for line, n in counts.items()]


def _format_warning(w) -> str:
    where = f"{w.filename}:{w.lineno}: " if is_user_frame(w.filename) else ""
    return f"{where}{w.category.__name__}: {w.message}"
