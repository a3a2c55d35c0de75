"""Warm worker processes, one per framework: spawned ahead of need, reused, killed and replaced.

The caller never imports torch or tensorflow: each framework lives in its own spawned process.
A cancelled request is interrupted in the worker, which answers and is kept (warm); a worker
that does not answer a cancel within CANCEL_GRACE_S, hangs past its timeout or outgrows its
memory limit is killed; one that dies (signal, os._exit) is noticed. Either way a fresh one is
started at once, so the next run finds it warm. Before a kill the worker is asked (SIGUSR1,
faulthandler) to dump its Python stack, so a hang or a memory hog is pointed at like a crash.
"""

from __future__ import annotations

import atexit
import os
import queue
import signal
import socket
import subprocess
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection

from gradviz.engine import janitor, scratch, transport
from gradviz.engine.errors import (
    Cancelled,
    WorkerCrashed,
    WorkerOutOfMemory,
    WorkerTimeout,
    WorkerUnavailable,
    describe_exit,
)
from gradviz.engine.launch import worker_command
from gradviz.engine.memory import format_bytes, memory_limit_from_env, rss_bytes
from gradviz.engine.stack_dump import read_log, request_stack
from gradviz.engine.worker_output import WorkerOutput, describe_failure

_LIVE: weakref.WeakSet[Worker] = weakref.WeakSet()
_SHUTTING_DOWN = threading.Event()  # set at interpreter exit: no new worker may start after it
_POLL_S = 0.05  # how often a waiting call checks cancel, deadline and memory
# A cancel keeps a worker that answers within this (its framework stays imported) and kills
# one that does not (native code that never returns to Python, an op that swallows it).
CANCEL_GRACE_S = 3.0
_CANCEL_RESEND_S = 0.25  # the signal again: an `except BaseException` may eat one


@dataclass
class WorkerState:
    framework: str
    state: str = "stopped"  # "stopped" | "starting" | "ready" | "busy" | "failed"
    detail: str = ""  # what it is doing, or why it failed
    version: str = ""  # the framework's version once imported
    import_s: float = 0.0
    pid: int = 0
    starts: int = 0  # how many processes were started (replacements included)


class _Child:
    """One worker process and what belongs to it."""

    def __init__(self, popen: subprocess.Popen, conn: Connection, folder: str):
        self.popen, self.conn, self.folder = popen, conn, folder
        self.log = os.path.join(folder, "crash.log")
        self.reader: threading.Thread | None = None  # drains its stdout/stderr pipe
        self.output_mark = 0  # Worker.output.count when it started
        self.log_mark = 0  # what of its crash log earlier cancels wrote (read already)
        self.ready = threading.Event()
        self.failed = ""  # why the framework could not be imported

    def alive(self) -> bool:
        return self.popen.poll() is None


class Worker:
    """One framework's worker process. Thread-safe: one request at a time."""

    def __init__(
        self,
        framework: str,
        on_state: Callable[[WorkerState], None] | None = None,
        memory_limit: int | None = None,
    ):
        self.framework = framework
        self.status = WorkerState(framework)
        self.crash_log = ""  # path of the current process's faulthandler log
        self.memory_limit = memory_limit_from_env() if memory_limit is None else memory_limit
        self._on_state = on_state
        self.output = WorkerOutput(framework)  # its processes' own stdout/stderr (not the user's)
        self._call_lock = threading.RLock()  # one request at a time
        self._lock = threading.RLock()  # guards _child; never held while waiting on a child
        self._child: _Child | None = None
        self._closed = False
        self._cancel = threading.Event()
        _LIVE.add(self)

    def follow(self, on_state: Callable[[WorkerState], None] | None) -> Worker:
        """State changes go to `on_state` from now on; one reached before (ready, failed) now."""
        with self._lock:
            self._on_state = on_state
            now = WorkerState(**vars(self.status))
        if on_state is not None and now.state in ("ready", "failed"):
            self._set(now.state, now.detail)
        return self

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Start the process if none is alive; returns at once (the import goes on in the child).

        A fresh interpreter (not fork: CUDA does not survive it), started with subprocess rather
        than multiprocessing so the caller's __main__ is never imported again in the worker."""
        with self._lock:
            self._closed = False
            self._spawn_if_needed()

    def _spawn_if_needed(self) -> _Child | None:
        with self._lock:
            if self._child is not None and self._child.alive():
                return self._child
            if self._closed or _SHUTTING_DOWN.is_set():
                return None
            if self._child is not None:  # died while idle
                self._reap(self._child)
            scratch.sweep_stale()  # what a killed gradviz left (once per process)
            janitor.watch()  # what this gradviz leaves if it is killed: removed at once
            ours, theirs = socket.socketpair()
            folder = scratch.new_folder(self.framework)
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
            try:
                os.close(scratch.create(os.path.join(folder, "crash.log")))
                # Its own session (process group): whatever the user's code starts is killed
                # with the worker (killpg in _reap).
                popen = _start(
                    worker_command(
                        [str(theirs.fileno()), self.framework, str(os.getpid()), folder]
                    ),
                    pass_fds=[theirs.fileno()],
                    stdin=subprocess.DEVNULL,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except BaseException:
                scratch.remove(folder)
                raise
            finally:
                theirs.close()
            janitor.watch(popen.pid)
            child = _Child(popen, Connection(ours.detach()), folder)
            child.output_mark = self.output.count
            child.reader = self.output.follow(popen.stdout)
            self._child, self.crash_log = child, child.log
            self.status.starts += 1
            self.status.pid = popen.pid
            self._set("starting", "loading " + self.framework)
            threading.Thread(target=self._await_ready, args=(child,), daemon=True).start()
            return child

    def _await_ready(self, child: _Child) -> None:
        try:
            kind, info = transport.recv(child.conn, child.folder)
        except (EOFError, OSError):
            code = _wait(child.popen, 2)
            if child.reader is not None:
                child.reader.join(1.0)  # its last words: a traceback in the bootstrap, say
            kind, info = (
                "fail",
                describe_failure(describe_exit(code), self.output.since(child.output_mark)),
            )
        if kind == "ready":
            if child is self._child:
                self.status.import_s = info["import_s"]
                self.status.version = info["version"]
                self._set("ready", "")
        else:
            child.failed = str(info) or "the worker could not start"
            if child is self._child:
                self._set("failed", child.failed)
        child.ready.set()

    def wait_ready(self, timeout: float | None = None) -> WorkerState:
        self.start()
        child = self._child
        if child is not None:
            child.ready.wait(timeout)
        return self.status

    def stop(self) -> None:
        """Stop the process for good (until start()); a call in flight ends as crashed."""
        with self._lock:
            self._closed = True
            child, self._child = self._child, None
        if child is None:
            return
        # A worker holds nothing worth a graceful exit, and tearing down torch or TensorFlow takes
        # a second: kill it (the reaper removes its crash log and shared-memory files).
        self._reap(child)
        self._set("stopped", "")

    def cancel(self) -> None:
        """Abort the request in flight: interrupted, the process kept; killed and replaced only
        when it does not answer (Worker._interrupt)."""
        self._cancel.set()

    def pid(self) -> int:
        child = self._child
        return child.popen.pid if child is not None and child.alive() else 0

    # --- requests ------------------------------------------------------------------------------
    def call(self, kind: str, payload, timeout: float, stop: threading.Event | None = None):
        """Send one request and wait for its reply. `stop`, when given and set (now or while the
        request runs), cancels it as cancel() does; unlike cancel(), which a call just starting
        clears, it cannot be lost in the moment between a run's start and this call.

        Raises WorkerTimeout (worker killed), WorkerCrashed / WorkerOutOfMemory (worker died or
        was killed), Cancelled (worker killed), WorkerUnavailable (framework failed to import).
        """
        with self._call_lock:
            self._cancel.clear()
            child = self._spawn_if_needed()
            if child is None:  # stop() was called (engine closed, or gradviz exiting)
                raise Cancelled("the worker was stopped")
            # The framework import is not part of the op's time budget, but it can be cancelled.
            while not child.ready.wait(_POLL_S):
                if self._cancel.is_set() or (stop is not None and stop.is_set()):
                    # it goes on importing its framework, for the next run: nothing to stop
                    raise Cancelled("cancelled while the worker was starting", replaced=False)
            if child.failed:
                with self._lock:
                    if self._child is child:
                        self._child = None  # try again next time (the user may have installed it)
                self._reap(child)
                raise WorkerUnavailable(child.failed)
            self._set("busy", kind)
            try:
                child.conn.send((kind, payload))
            except (OSError, ValueError):
                raise self._died(child) from None
            deadline = time.monotonic() + timeout
            while True:
                if self._cancel.is_set() or (stop is not None and stop.is_set()):
                    log, kept = self._interrupt(child)
                    raise Cancelled("cancelled", log, replaced=not kept)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WorkerTimeout(
                        f"no answer within {timeout:g} s", self._replace(child, dump=True)
                    )
                if self.memory_limit and rss_bytes(child.popen.pid) > self.memory_limit:
                    limit = format_bytes(self.memory_limit)
                    raise WorkerOutOfMemory(
                        f"was killed: it used more than {limit} of memory",
                        self.memory_limit,
                        self._replace(child, dump=True),
                    )
                try:
                    if child.conn.poll(min(left, _POLL_S)):
                        status, value = transport.recv(child.conn, child.folder)
                        break
                except (EOFError, OSError, ValueError):
                    raise self._died(child) from None
            self._set("ready", "")
            if status == "bug":
                raise RuntimeError(f"internal error in the {self.framework} worker:\n{value}")
            return value

    def _interrupt(self, child: _Child) -> tuple[str, bool]:
        """SIGUSR2 makes `child` unwind its request and answer (engine/child.py; the answer is
        dropped): (the stack it logged, True). No answer within CANCEL_GRACE_S: killed and
        replaced, (its dumped stack, False)."""
        end = time.monotonic() + CANCEL_GRACE_S
        sent = 0.0
        while time.monotonic() < end and child.alive():
            now = time.monotonic()
            if now - sent >= _CANCEL_RESEND_S:
                try:
                    os.kill(child.popen.pid, signal.SIGUSR2)
                except OSError:
                    break
                sent = now
            try:
                if child.conn.poll(_POLL_S):
                    transport.recv(child.conn, child.folder)  # its reply: not wanted now
                    self._set("ready", "")
                    # the stack it logged; a later crash or hang reads only what follows
                    text = read_log(child.log)
                    stack, child.log_mark = text[child.log_mark :], len(text)
                    return stack, True
            except (EOFError, OSError, ValueError):
                break  # it died meanwhile: replaced below
        return self._replace(child, dump=True), False

    def _died(self, child: _Child) -> Exception:
        code = _wait(child.popen, 2)
        log = self._replace(child, dump=False)
        if self._closed and self._child is None:  # stop() killed it: not the user's fault
            return Cancelled("the worker was stopped", log)
        return WorkerCrashed(describe_exit(code), code, log)

    def _replace(self, child: _Child, dump: bool) -> str:
        """Kill `child` (asking it for its stack first when `dump`), start its successor at once,
        and return what the child wrote to its crash log."""
        if dump and child.alive():
            request_stack(child.popen.pid, child.log, child.alive)
        log = self._reap(child)
        with self._lock:
            if self._child is child:
                self._child = None
                self._set("stopped", "replacing")
                self._spawn_if_needed()
        return log

    @staticmethod
    def _reap(child: _Child) -> str:
        """Kill the process and its process group (what the user's code started), close its pipe,
        return its crash log and remove its scratch folder (arrays never read, the log)."""
        _kill_group(child.popen)
        if _wait(child.popen, 5) is not None:
            janitor.watch(child.popen.pid, reaped=True)
        try:
            child.conn.close()
        except OSError:
            pass
        text = read_log(child.log)[child.log_mark :]
        scratch.remove(child.folder)
        return text

    def _set(self, state: str, detail: str) -> None:
        self.status.state, self.status.detail = state, detail
        if self._on_state is not None:
            try:
                self._on_state(WorkerState(**vars(self.status)))
            except Exception:  # noqa: BLE001 - a listener must not break the worker
                pass


def _kill_group(popen: subprocess.Popen) -> None:
    """SIGKILL the worker's process group (its pgid is its pid: start_new_session)."""
    try:
        os.killpg(popen.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # gone already, group and all
    if popen.poll() is None:
        try:
            popen.kill()
        except OSError:
            pass


_spawn_requests: queue.SimpleQueue = queue.SimpleQueue()
_spawn_lock = threading.Lock()
_spawner: threading.Thread | None = None


def _start(argv: list[str], **kwargs) -> subprocess.Popen:
    """Popen from one long-lived thread: a worker's PR_SET_PDEATHSIG (child.py) fires when the
    *thread* that started it ends, and workers are replaced from short-lived run threads."""
    global _spawner
    with _spawn_lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_serve_spawns, name="gradviz-spawner", daemon=True)
            _spawner.start()
    done, box = threading.Event(), []
    _spawn_requests.put((argv, kwargs, box, done))
    done.wait()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def _serve_spawns() -> None:
    while True:
        argv, kwargs, box, done = _spawn_requests.get()
        try:
            box.append(subprocess.Popen(argv, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box.append(exc)
        done.set()


def _wait(proc, timeout: float) -> int | None:
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return None


def stop_all() -> None:
    """Stop every worker of this process (at exit, Ctrl-C included); none may start after it."""
    _SHUTTING_DOWN.set()
    for worker in list(_LIVE):
        try:
            worker.stop()
        except Exception:  # noqa: BLE001
            pass


atexit.register(stop_all)
