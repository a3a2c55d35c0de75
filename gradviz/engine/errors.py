"""Why a call to a worker did not return a value: timeout, crash, out of memory, cancel, no framework."""

from __future__ import annotations

import signal

from gradviz.errors import GradvizError


class WorkerFailure(GradvizError):
    """A call to a worker that gave no value: the worker timed out, crashed, could not import
    its framework, or the call was cancelled (engine.failures puts each in words)."""


class WorkerTimeout(WorkerFailure):
    def __init__(self, message: str, crash_log: str = ""):
        super().__init__(message)
        self.crash_log = crash_log  # the Python stack dumped just before the kill


class WorkerCrashed(WorkerFailure):
    def __init__(self, message: str, exitcode: int | None, crash_log: str = ""):
        super().__init__(message)
        self.exitcode = exitcode
        self.crash_log = crash_log  # faulthandler's dump of the Python stack, if any


class WorkerOutOfMemory(WorkerCrashed):
    """The worker's resident memory went over its limit; it was killed."""

    def __init__(self, message: str, limit: int, crash_log: str = ""):
        super().__init__(message, -signal.SIGKILL, crash_log)
        self.limit = limit


class WorkerUnavailable(WorkerFailure):
    """The framework could not be imported in the worker (not installed, broken install)."""


class Cancelled(WorkerFailure):
    def __init__(self, message: str = "cancelled", crash_log: str = "", replaced: bool = True):
        super().__init__(message)
        self.crash_log = crash_log
        self.replaced = replaced  # False: the worker answered the cancel and was kept


_SIGNAL_WORDS = {
    "SIGSEGV": "segmentation fault",
    "SIGABRT": "abort",
    "SIGBUS": "bus error",
    "SIGFPE": "floating-point exception",
    "SIGILL": "illegal instruction",
    "SIGKILL": "killed; out of memory?",
}


def describe_exit(exitcode: int | None) -> str:
    if exitcode is None:
        return "the worker stopped answering"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        word = _SIGNAL_WORDS.get(name)
        return f"the worker was killed by {name}" + (f" ({word})" if word else "")
    return (
        f"the worker process exited with code {exitcode} (os._exit or a fatal error in native code)"
    )
