"""Warm worker processes, one per framework: spawned ahead of need, reused, killed and replaced.

The caller never imports torch or tensorflow: each framework lives in its own spawned process.
A worker that hangs is killed on timeout; one that dies (signal, os._exit) is replaced on next use.
"""
from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Callable, Optional

_GRADVIZ_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_LIVE: "weakref.WeakSet[Worker]" = weakref.WeakSet()


class WorkerTimeout(Exception):
    pass


class WorkerCrashed(Exception):
    def __init__(self, message: str, exitcode: Optional[int], crash_log: str = ""):
        super().__init__(message)
        self.exitcode = exitcode
        self.crash_log = crash_log  # faulthandler's dump of the Python stack, if any


class WorkerUnavailable(Exception):
    """The framework could not be imported in the worker (not installed, broken install)."""


class Cancelled(Exception):
    pass


@dataclass
class WorkerState:
    framework: str
    state: str = "stopped"        # "stopped" | "starting" | "ready" | "busy" | "failed"
    detail: str = ""              # what it is doing, or why it failed
    version: str = ""             # the framework's version once imported
    import_s: float = 0.0
    pid: int = 0
    starts: int = 0               # how many processes were started (replacements included)


def describe_exit(exitcode: Optional[int]) -> str:
    if exitcode is None:
        return "the worker stopped answering"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (out of memory?)" if name == "SIGKILL" else ""
        return f"the worker was killed by {name}{hint}"
    return f"the worker process exited with code {exitcode} (os._exit or a fatal error in native code)"


class Worker:
    """One framework's worker process. Thread-safe: one request at a time."""

    def __init__(self, framework: str, on_state: Optional[Callable[[WorkerState], None]] = None):
        self.framework = framework
        self.status = WorkerState(framework)
        self.crash_log = ""
        self._on_state = on_state
        self._lock = threading.RLock()
        self._proc = None
        self._conn = None
        self._ready = threading.Event()
        self._cancel = threading.Event()
        _LIVE.add(self)

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Start the process if none is alive; returns at once (the import goes on in the child).

        A fresh interpreter (not fork: CUDA does not survive it), started with subprocess rather
        than multiprocessing so the caller's __main__ is never imported again in the worker."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return
            ours, theirs = socket.socketpair()
            fd, self.crash_log = tempfile.mkstemp(prefix=f"gradviz-{self.framework}-", suffix=".log")
            os.close(fd)
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"),
                       PYTHONPATH=os.pathsep.join(filter(None, [_GRADVIZ_ROOT,
                                                                os.environ.get("PYTHONPATH")])))
            proc = subprocess.Popen(
                [sys.executable, "-c", "from gradviz.engine.worker import child_main; child_main()",
                 str(theirs.fileno()), self.framework, str(os.getpid()), self.crash_log],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=env)
            theirs.close()
            self._proc, self._conn = proc, Connection(ours.detach())
            self._ready.clear()
            self.status.starts += 1
            self._set("starting", "loading " + self.framework)
            threading.Thread(target=self._await_ready, args=(proc, self._conn), daemon=True).start()

    def _await_ready(self, proc, conn) -> None:
        try:
            kind, info = conn.recv()
        except (EOFError, OSError):
            kind, info = "fail", describe_exit(_wait(proc, 2))
        if proc is not self._proc:
            return
        if kind == "ready":
            self.status.import_s = info["import_s"]
            self.status.pid = info["pid"]
            self.status.version = info["version"]
            self._set("ready", "")
        else:
            self._set("failed", str(info))
        self._ready.set()

    def wait_ready(self, timeout: Optional[float] = None) -> WorkerState:
        self.start()
        self._ready.wait(timeout)
        return self.status

    def stop(self) -> None:
        with self._lock:
            proc, conn = self._proc, self._conn
            self._proc = self._conn = None
        if proc is None:
            return
        try:
            conn.send(("stop", None))
        except (OSError, BrokenPipeError):
            pass
        _wait(proc, 0.5)
        self._kill(proc)
        self._set("stopped", "")

    @staticmethod
    def _kill(proc) -> None:
        if proc.poll() is None:
            proc.kill()
        _wait(proc, 5)

    def cancel(self) -> None:
        """Abort the request in flight (the process is killed and replaced on next use)."""
        self._cancel.set()

    # --- requests ------------------------------------------------------------------------------
    def call(self, kind: str, payload, timeout: float):
        """Send one request and wait for its reply.

        Raises WorkerTimeout (worker killed), WorkerCrashed (worker died), Cancelled (worker
        killed), WorkerUnavailable (framework failed to import).
        """
        with self._lock:
            self._cancel.clear()
            self.start()
            # The framework import is not part of the op's time budget.
            self._ready.wait()
            if self.status.state == "failed":
                reason = self.status.detail
                self._proc = None  # try again next time (the user may have installed it)
                raise WorkerUnavailable(reason)
            proc, conn = self._proc, self._conn
            self._set("busy", kind)
            try:
                conn.send((kind, payload))
            except (BrokenPipeError, OSError):
                raise self._died(proc) from None
            deadline = time.monotonic() + timeout
            while True:
                if self._cancel.is_set():
                    self._discard(proc)
                    raise Cancelled("cancelled")
                left = deadline - time.monotonic()
                if left <= 0:
                    self._discard(proc)
                    raise WorkerTimeout(f"no answer within {timeout:g} s")
                try:
                    if conn.poll(min(left, 0.05)):
                        status, value = conn.recv()
                        break
                except (EOFError, OSError):
                    raise self._died(proc) from None
            self._set("ready", "")
            if status == "bug":
                raise RuntimeError(f"internal error in the {self.framework} worker:\n{value}")
            return value

    def _died(self, proc) -> WorkerCrashed:
        code = _wait(proc, 2)
        self._discard(proc)
        return WorkerCrashed(describe_exit(code), code, _read(self.crash_log))

    def _discard(self, proc) -> None:
        self._kill(proc)
        if self._proc is proc:
            self._proc = self._conn = None
            self._set("stopped", "replacing")

    def _set(self, state: str, detail: str) -> None:
        self.status.state, self.status.detail = state, detail
        if self._on_state is not None:
            try:
                self._on_state(WorkerState(**vars(self.status)))
            except Exception:  # noqa: BLE001 - a listener must not break the worker
                pass


def _wait(proc, timeout: float) -> Optional[int]:
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return None


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def stop_all() -> None:
    for worker in list(_LIVE):
        try:
            worker.stop()
        except Exception:  # noqa: BLE001
            pass


atexit.register(stop_all)
