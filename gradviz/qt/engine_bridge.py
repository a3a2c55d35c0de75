"""A QObject over gradviz.engine.engine.Engine: blocking engine calls run on plain threads and
their answers reach the GUI as queued Qt signals, so the window never waits on a worker.

The engine is created lazily (after the window is shown) unless one is injected (tests reuse a
warm one). Worker states are polled, so an injected engine reports them too.
"""
from __future__ import annotations

import inspect
import queue
import threading
from typing import Callable, Iterable, Optional

from PySide6.QtCore import QObject, QTimer, Signal

from gradviz.model import FRAMEWORKS, RunRequest


class EngineBridge(QObject):
    workerState = Signal(object)      # gradviz.engine.worker.WorkerState (a copy)
    catalogsReady = Signal(object, object)  # (list[FileCatalog], tuple of files asked for)
    devicesReady = Signal(object)     # {fw: {"devices": [...], "error": str|None}}
    runStarted = Signal(object)       # RunRequest, as its worker takes it
    resultReady = Signal(object)      # RunResult, as each arrives
    partialReady = Signal(object)     # RunResult with partial=True: custom+default, numeric pending
    # gradviz.plots.prepared.Prepared (verdicts and curves computed off the GUI thread), emitted
    # after resultReady / partialReady of the same result and before runFinished
    resultPrepared = Signal(object)
    partialPrepared = Signal(object)
    checksReady = Signal(object)      # RunResult with its contract checks, after all results
    runFinished = Signal(object)      # list[RunResult], when the whole batch is done
    busyChanged = Signal(bool)
    failed = Signal(str)              # a bug in the engine itself (not user code)
    workerOutput = Signal(str, str)   # (framework, line) a worker printed outside user calls

    def __init__(self, engine=None, frameworks: Iterable[str] = FRAMEWORKS, parent=None):
        super().__init__(parent)
        self.frameworks = tuple(frameworks)
        self.engine = engine
        self._owns_engine = engine is None
        self._running = False
        self._last_states: dict[str, tuple] = {}
        self._poll = QTimer(self)
        self._poll.setInterval(150)
        self._poll.timeout.connect(self._poll_states)
        self._unfollow: Optional[Callable[[], None]] = None

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Create (or adopt) the engine: the workers spawn and import their framework at once."""
        if self.engine is None:
            from gradviz.engine.engine import Engine  # spawn machinery only, no framework
            self.engine = Engine(self.frameworks, start=False)
            self._follow_output()
            self.engine.start()
        else:
            self.frameworks = tuple(self.engine.frameworks)
            self._follow_output()
        self._poll.start()
        self._poll_states()

    def _follow_output(self) -> None:
        # Framework start-up noise goes to the log panel, never the user's terminal. The signal
        # is emitted from a pipe-reading thread; Qt queues it to this object's thread.
        follow = getattr(self.engine, "follow_output", None)
        if follow is not None and self._unfollow is None:
            self._unfollow = follow(self.workerOutput.emit, replay=True)

    def close(self) -> None:
        self._poll.stop()
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None
        if self.engine is not None:
            if self._running:
                self.engine.cancel()
            if self._owns_engine:
                self.engine.close()

    @property
    def running(self) -> bool:
        return self._running

    def _poll_states(self) -> None:
        if self.engine is None:
            return
        for fw, st in self.engine.states().items():
            key = (st.state, st.detail, st.version, st.starts)
            if self._last_states.get(fw) != key:
                self._last_states[fw] = key
                from dataclasses import replace
                self.workerState.emit(replace(st))

    # --- calls ---------------------------------------------------------------------------------
    def _in_thread(self, name: str, fn: Callable[[], None]) -> None:
        def guarded():
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - show engine bugs instead of losing them
                import traceback
                self.failed.emit(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        threading.Thread(target=guarded, name=f"gradviz-gui-{name}", daemon=True).start()

    def discover(self, files: Iterable[str]) -> None:
        files = tuple(files)
        self._in_thread("discover", lambda: self.catalogsReady.emit(self.engine.load(files), files))

    def refresh_devices(self) -> None:
        self._in_thread("devices", lambda: self.devicesReady.emit(self.engine.devices()))

    def run(self, requests: list[RunRequest]) -> bool:
        """Start a batch; False when one is already running (the caller keeps the request)."""
        if self._running or not requests:
            return False
        self._running = True
        self.busyChanged.emit(True)

        def work():
            results = []
            jobs: queue.Queue = queue.Queue()
            prep = threading.Thread(target=self._prepare_loop, args=(jobs,),
                                    name="gradviz-gui-prepare", daemon=True)
            prep.start()

            def on_result(res):
                self.resultReady.emit(res)
                jobs.put((res, self.resultPrepared))

            def on_partial(res):
                self.partialReady.emit(res)
                jobs.put((res, self.partialPrepared))
            extra = {"on_partial": on_partial} if _accepts(self.engine.run, "on_partial") else {}
            if extra and _accepts(self.engine.run, "on_checks"):
                extra["on_checks"] = self.checksReady.emit
            try:
                results = self.engine.run(requests, on_result=on_result,
                                          on_start=self.runStarted.emit, **extra)
            finally:
                jobs.put(None)
                prep.join()          # every prepared result reaches the window before the end
                self._running = False
                # Idle first: whoever waits for runFinished finds the Run button enabled again.
                self.busyChanged.emit(False)
                self.runFinished.emit(results)
        self._in_thread("run", work)
        return True

    def _prepare_loop(self, jobs: queue.Queue) -> None:
        """Compare and decimate results in two threads, so both frameworks' partial results of an
        op, which arrive together, are ready together (numpy lets go of the GIL); a partial result
        is still always emitted before the full one of the same op."""
        from concurrent.futures import ThreadPoolExecutor
        last: dict = {}                         # op key -> future of its previous emission
        with ThreadPoolExecutor(2, thread_name_prefix="gradviz-gui-prepare") as pool:
            while True:
                job = jobs.get()
                if job is None:
                    return                      # leaving the pool waits for every job
                res, signal = job
                req = res.request
                key = (req.framework, req.file, req.qualname)
                # waits only on an earlier job, which a thread has already taken: no deadlock
                last[key] = pool.submit(self._prepare_one, res, signal, last.get(key))

    def _prepare_one(self, res, signal, before) -> None:
        from gradviz.plots.prepared import Prepared, prepare
        try:
            ready = prepare(res)
        except Exception as exc:  # noqa: BLE001 - the result must still reach the window
            ready = Prepared(res, None, {}, f"{type(exc).__name__}: {exc}")
        if before is not None:
            before.exception()                  # wait for it; its own failure is its own
        signal.emit(ready)

    def cancel(self) -> None:
        if self.engine is not None and self._running:
            self.engine.cancel()


def _accepts(fn, name: str) -> bool:
    """Whether `fn` takes a keyword `name` (an older or injected engine may not have on_partial)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
