"""A QObject over gradviz.engine.Engine: blocking engine calls run in owned tasks (qt/tasks.py)
and their answers reach the GUI as queued Qt signals, so the window never waits on a worker. Each
result is analysed off the GUI thread (app.analysis) and delivered once; close() cancels what is
in flight and joins every thread it started.

The engine is created lazily (after the window is shown) unless one is injected (tests reuse a
warm one). Worker states are polled, so an injected engine reports them too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from gradviz.model import FRAMEWORKS, RunRequest, RunResult
from gradviz.qt.tasks import TaskGroup

if TYPE_CHECKING:  # numpy and the analysis come with the first run
    from gradviz.app.run_analysis import RunAnalysis

CLOSE_TIMEOUT_S = 15.0  # a cancelled run ends within a worker kill; a load within its timeout


class EngineBridge(QObject):
    workerState = Signal(object)  # gradviz.engine.worker.WorkerState (a copy)
    catalogsReady = Signal(object, object)  # (list[FileCatalog], tuple of files asked for)
    devicesReady = Signal(object)  # {fw: {"devices": [...], "error": str|None}}
    opStarted = Signal(object)  # RunRequest, as its worker takes it
    # gradviz.app.analysis.Analysis of each result, partial (custom+default, numeric pending) or
    # final; a partial one always before the final one of the same op, all before runFinished
    resultReady = Signal(object)
    checksReady = Signal(object)  # RunResult with its contract checks, after its result
    # (pair, list[Analysis]): a pair's final analyses with their parity rows, made in the run
    # task once each framework's final result of the pair is in, after their resultReady
    parityReady = Signal(str, object)
    runFinished = Signal(object)  # list[RunResult], when the whole batch is done
    busyChanged = Signal(bool)
    failed = Signal(str)  # a bug in the engine itself (not user code)
    workerOutput = Signal(str, str)  # (framework, line) a worker printed outside user calls

    def __init__(self, engine=None, frameworks: Iterable[str] = FRAMEWORKS, parent=None):
        super().__init__(parent)
        self.frameworks = tuple(frameworks)
        self.engine = engine
        self._owns_engine = engine is None
        self._running = False
        # Cancel asked for this batch: Engine.run_passes clears its stop flag as it starts, so a
        # cancel right after Run (Esc after Ctrl+R), before the run thread got there, was lost
        # and the whole batch ran; each op's start applies it again (_started)
        self._cancel_asked = threading.Event()
        self._last_states: dict[str, tuple] = {}
        self._poll = QTimer(self)
        self._poll.setInterval(150)
        self._poll.timeout.connect(self._poll_states)
        self._unfollow: Callable[[], None] | None = None
        self._analysis: RunAnalysis | None = None  # the running batch's analyses
        self.tasks = TaskGroup(self)
        self.tasks.errored.connect(self.failed)

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Create (or adopt) the engine: the workers spawn and import their framework at once."""
        if self.engine is None:
            from gradviz.engine import Engine  # spawn machinery only, no framework

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

    def close(self) -> list[str]:
        """Cancel what is in flight, stop an engine of our own, join every task. Returns the
        names of tasks that did not end in time (none, unless a worker ignores a kill)."""
        self._poll.stop()
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None
        if self.engine is not None:
            if self.tasks.live():
                self.engine.cancel()
            if self._owns_engine:
                self.engine.close()
        return self.tasks.close(CLOSE_TIMEOUT_S)

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
                self.workerState.emit(replace(st))

    # --- calls ---------------------------------------------------------------------------------
    def load(self, files: Iterable[str]) -> None:
        files = tuple(files)
        self.tasks.start(
            "load",
            lambda: self.engine.load(files),
            lambda catalogs: self.catalogsReady.emit(catalogs, files),
        )

    def refresh_devices(self) -> None:
        self.tasks.start("devices", self.engine.devices, self.devicesReady.emit)

    def run(self, requests: list[RunRequest], pairs: dict | None = None) -> bool:
        """Start a batch; False when one is already running (the caller keeps the request).
        `pairs`: {OpKey: (pair name, final analyses of the pair's ops not in this batch)} of
        the requests: each pair's parity is made in the run task (parityReady)."""
        if self._running or not requests or self.tasks.closed:
            return False
        from gradviz.app.run_analysis import RunAnalysis

        self._analysis = analysis = RunAnalysis(
            self.resultReady.emit,
            self.checksReady.emit,
            self.parityReady.emit,
            pairs,
            self._cancel_asked.is_set,
        )
        self._running = True
        self._cancel_asked.clear()
        self.busyChanged.emit(True)
        self.tasks.start(
            "run",
            lambda: self._run(list(requests), analysis),
            self._finished,
            lambda _error: self._finished([]),
        )
        return True

    def _finished(self, results) -> None:
        self._running = False
        # Idle first: whoever waits for runFinished finds the Run button enabled again.
        self.busyChanged.emit(False)
        self.runFinished.emit(list(results))

    def _run(self, requests: list[RunRequest], analysis: RunAnalysis) -> list[RunResult]:
        """The run task: the window's passes (QUICK -> NUMERIC -> CHECKS, engine.passes.plan),
        their events from one thread per framework, analysed in one lane per framework
        (app.run_analysis) and emitted in each op's order; the run ends once all are out."""
        from gradviz.engine.passes import OpStarted, plan

        def on_event(ev) -> None:
            if isinstance(ev, OpStarted):
                self._started(ev.request)
            else:
                analysis.put(ev)

        try:
            passes = plan(requests, progressive=True, checks_apart=True)
            return self.engine.run_passes(requests, passes, on_event)
        finally:
            analysis.close()  # every analysis reaches the window before the end

    def _started(self, req: RunRequest) -> None:
        """An op's worker takes it (a run thread): a cancel asked before the engine's run
        began stops it now, as every later one."""
        if self._cancel_asked.is_set():
            self.engine.cancel()
        self.opStarted.emit(req)

    def parity_pending(self, pair: str) -> bool:
        """Whether the running batch may still bring `pair`'s parity: parityReady reaches the
        GUI thread before runFinished does, so till then (unless cancelled) it is on its way."""
        analysis = self._analysis
        return (
            self._running
            and not self._cancel_asked.is_set()
            and analysis is not None
            and analysis.pending(pair)
        )

    def cancel(self) -> None:
        """Stop the batch: sets flags only (Engine.cancel), never waits on a worker; the run
        thread stops the op in flight and ends the batch."""
        if self.engine is not None and self._running:
            self._cancel_asked.set()
            self.engine.cancel()

    def skip(self, keys) -> None:
        """Skip these ops of the running batch (Engine.skip, which waits for each to stop)."""
        if self.engine is not None and self._running:
            keys = list(keys)
            self.tasks.start("skip", lambda: [self.engine.skip(k) for k in keys])
