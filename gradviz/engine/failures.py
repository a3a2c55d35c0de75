"""A request its worker did not answer, in words: what was being done, what happened to the
worker (a timeout, a cancel, a memory kill, a crash, in the op's call or in a thread of the
user's) and the user's line where the worker's stack dump holds one."""

from __future__ import annotations

from gradviz.engine.errors import (
    Cancelled,
    WorkerCrashed,
    WorkerOutOfMemory,
    WorkerTimeout,
    WorkerUnavailable,
)
from gradviz.model import ErrorInfo
from gradviz.user_frames import crashed_in_a_user_thread, locate_in_stack_dump
from gradviz.vocab import ErrorKind


def failure_info(exc: Exception, what: str, fw: str, timeout: float) -> ErrorInfo:
    """The ErrorInfo of a request its worker did not answer: it names what was being done, and
    the user's line when the worker's stack dump holds one."""
    where, tb = _where_from_dump(getattr(exc, "crash_log", ""))
    if isinstance(exc, WorkerTimeout):
        return ErrorInfo(
            "Timeout",
            f"{what} did not finish within {timeout:g} s; its {fw} worker was stopped and replaced",
            where,
            tb,
            kind=ErrorKind.TIMEOUT,
        )
    if isinstance(exc, Cancelled):
        fate = "replaced (it did not answer the cancel)" if exc.replaced else "kept"
        return ErrorInfo(
            "Cancelled",
            f"{what} was cancelled; its {fw} worker was {fate}",
            where,
            tb,
            kind=ErrorKind.CANCELLED,
        )
    if isinstance(exc, WorkerOutOfMemory):
        return ErrorInfo(
            "OutOfMemory",
            f"{what} {exc}; its {fw} worker was replaced (the "
            "limit per worker is set by GRADVIZ_WORKER_MEMORY)",
            where,
            tb,
            kind=ErrorKind.CRASHED,
        )
    if isinstance(exc, WorkerCrashed):
        if crashed_in_a_user_thread(exc.crash_log):
            return ErrorInfo(
                "Crashed",
                (
                    f"its {fw} worker crashed ({_crash_text(exc)}) in a thread that user code started "
                    f"(its stack is at {where}), not in the call of {what}, which was running then; "
                    "the worker was replaced"
                ),
                where,
                tb,
                kind=ErrorKind.CRASHED,
            )
        return ErrorInfo(
            "Crashed",
            f"{what} crashed its {fw} worker: {_crash_text(exc)}; the worker was replaced",
            where,
            tb,
            kind=ErrorKind.CRASHED,
        )
    if isinstance(exc, WorkerUnavailable):
        return ErrorInfo(
            "FrameworkUnavailable", f"{fw} could not be loaded: {exc}", kind=ErrorKind.UNAVAILABLE
        )
    return ErrorInfo("InternalError", f"gradviz failed at {what}: {exc}", kind=ErrorKind.INTERNAL)


def _crash_text(exc: WorkerCrashed) -> str:
    """os._exit leaves a line in the crash log (the worker wraps it); say so plainly."""
    for line in exc.crash_log.splitlines():
        if line.startswith("gradviz: os._exit("):
            return "user code called " + line[len("gradviz: ") :].replace(" called", "")
    return str(exc)


def _where_from_dump(text: str) -> tuple[str, str]:
    if not text:
        return "", ""
    return locate_in_stack_dump(text)
