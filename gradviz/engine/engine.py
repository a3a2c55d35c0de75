"""The engine as the CLI and the GUI see it: load files, list devices, run ops, cancel.

Qt-free and framework-free. One warm Worker per framework; runs of the two frameworks go on in
parallel (one thread each), ops of one framework one after another in its worker.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace

from gradviz.engine.checks_pass import ChecksMerge
from gradviz.engine.errors import WorkerFailure
from gradviz.engine.failures import failure_info
from gradviz.engine.file_loading import LOAD_TIMEOUT, load_files
from gradviz.engine.in_flight import InFlight
from gradviz.engine.numeric_pass import numeric_cancelled, numeric_failed, with_numeric
from gradviz.engine.passes import (
    CHECKS_PASS,
    QUICK_PASS,
    ChecksArrived,
    OpStarted,
    Pass,
    ResultArrived,
    RunEvent,
    plan,
    without_checks,
    without_numeric,
)
from gradviz.engine.per_framework import by_framework, in_parallel
from gradviz.engine.worker import Worker, WorkerState
from gradviz.model import (
    FRAMEWORKS,
    ErrorInfo,
    FileCatalog,
    NumericReply,
    OpKey,
    RunRequest,
    RunResult,
)
from gradviz.vocab import ErrorKind, Mode


def _as_is(value):
    return value


class Engine:
    def __init__(
        self,
        frameworks: Iterable[str] = FRAMEWORKS,
        on_state: Callable[[WorkerState], None] | None = None,
        start: bool = True,
        workers: dict[str, Worker] | None = None,
    ):
        """`workers`: ones started already (cli/early_start.py), adopted for their frameworks."""
        self.frameworks = tuple(frameworks)
        adopted = workers or {}
        self.workers = {
            fw: adopted[fw].follow(on_state) if fw in adopted else Worker(fw, on_state)
            for fw in self.frameworks
        }
        self._stop = threading.Event()  # skip the rest of the run (cancel, close)
        self._closed = False
        self._flight = InFlight()
        if start:
            self.start()

    def start(self, frameworks: Iterable[str] | None = None) -> None:
        self._closed = False
        for fw in frameworks or self.frameworks:
            self.workers[fw].start()

    def follow_output(
        self, listener: Callable[[str, str], None], replay: bool = False
    ) -> Callable[[], None]:
        """Call `listener(framework, line)` for each line a worker prints outside the user's calls
        (framework start-up noise; engine.worker_output); with `replay`, the lines kept so far
        first. Returns the call that stops it."""
        outputs = [w.output for w in self.workers.values()]
        for out in outputs:
            out.listen(listener, replay)

        def unfollow() -> None:
            for out in outputs:
                out.unlisten(listener)

        return unfollow

    def states(self) -> dict[str, WorkerState]:
        return {fw: w.status for fw, w in self.workers.items()}

    def close(self) -> None:
        """Stop every worker process (a run in flight ends as cancelled; none is left behind)."""
        self._closed = True
        self._stop.set()
        for w in self.workers.values():
            w.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- loading files--------------------------------------------------------------------------
    def load(
        self,
        files: Iterable[str],
        timeout: float = LOAD_TIMEOUT,
        on_loaded: Callable[[str, list[FileCatalog]], None] | None = None,
    ) -> list[FileCatalog]:
        """Ops of each file, per framework it uses (engine.file_loading.load_files)."""
        return load_files(
            self.workers, self.frameworks, files, timeout, lambda: self._closed, on_loaded
        )

    def devices(self) -> dict[str, dict]:
        """{framework: {"devices": [{"name", "kind", "available", "reason"}], "error": str|None}}."""
        out: dict[str, dict] = {}

        def work(fw: str) -> None:
            try:
                out[fw] = {"devices": self.workers[fw].call("devices", None, 60.0), "error": None}
            except (WorkerFailure, RuntimeError) as exc:
                out[fw] = {"devices": [], "error": str(exc)}

        in_parallel(work, self.frameworks)
        return {fw: out[fw] for fw in self.frameworks}

    # --- runs ----------------------------------------------------------------------------------
    def run(
        self,
        requests: Iterable[RunRequest],
        on_result: Callable[[RunResult], None] | None = None,
        on_start: Callable[[RunRequest], None] | None = None,
        on_partial: Callable[[RunResult], None] | None = None,
        on_checks: Callable[[RunResult], None] | None = None,
    ) -> list[RunResult]:
        """run_passes with one callback per event: `on_start` (OpStarted), `on_partial` and
        `on_result` (ResultArrived, partial or final), `on_checks` (ChecksArrived). With
        `on_partial` the run is progressive (QUICK -> NUMERIC), with `on_checks` too the checks
        are a pass of their own (engine.passes.plan); else one FULL pass."""
        requests = list(requests)
        calls = {OpStarted: on_start, ChecksArrived: on_checks}

        def on_event(ev: RunEvent) -> None:
            call = (
                calls.get(type(ev))
                if not isinstance(ev, ResultArrived)
                else on_partial
                if ev.partial
                else on_result
            )
            if call is not None:
                call(ev.request if isinstance(ev, OpStarted) else ev.result)

        passes = plan(
            requests, progressive=on_partial is not None, checks_apart=on_checks is not None
        )
        return self.run_passes(requests, passes, on_event)

    def run_passes(
        self,
        requests: Iterable[RunRequest],
        passes: tuple[Pass, ...],
        on_event: Callable[[RunEvent], None] | None = None,
    ) -> list[RunResult]:
        """Run every request through `passes` (engine.passes.plan); each failure (error,
        timeout, crash, cancel) is a result too. Returns the final results in request order
        (with their checks merged in); `on_event` gets each event as it comes (from a worker
        thread): OpStarted, ResultArrived (QUICK's partial, then the final one), ChecksArrived.

        QUICK -> NUMERIC: every op without the numeric mode first (each result partial), then in
        full; each framework's worker goes on to its NUMERIC share as soon as its own QUICK share
        is done. The custom and default gradients of all ops show at once; the numeric reference,
        which costs hundreds of forward passes, fills in after. CHECKS: contract checks
        (settings.checks) after every op's final result; without it they run inside each op's
        request."""
        requests = list(requests)
        emit = on_event or (lambda _ev: None)
        self._stop.clear()
        self._flight.new_run()
        main = [without_checks(r) for r in requests] if CHECKS_PASS in passes else requests

        def arrived(res: RunResult) -> None:
            emit(ResultArrived(res))

        def start(req: RunRequest) -> None:
            emit(OpStarted(req))

        if QUICK_PASS in passes:
            done: dict[RunRequest, RunResult] = {}

            def deliver(res: RunResult) -> None:
                if res.status == "ok":  # a failure shows up again in the full pass
                    done[res.request] = res
                    emit(ResultArrived(replace(res, partial=True)))

            # An op is "running" from its first pass; its worker keeps what this pass made.
            # NUMERIC adds the numeric reference (numeric_pass), at low priority: the window is
            # painting QUICK's results meanwhile.
            first = [QUICK_PASS.asks(r) for r in main if QUICK_PASS.takes(r)]
            results = self._run_batch(
                main, arrived, start, background=True, quick=done, first=(first, deliver)
            )
        else:
            results = self._run_batch(main, arrived, start)
        if CHECKS_PASS in passes:
            results = self._run_checks(requests, results, lambda res: emit(ChecksArrived(res)))
        return results

    def run_streams(
        self,
        streams: dict[str, Iterable[RunRequest]],
        on_event: Callable[[RunEvent], None] | None = None,
    ) -> list[RunResult]:
        """One FULL pass whose requests of each framework come from that framework's own
        iterable, which may wait for them (the CLI's: a framework's ops as soon as its own files
        are loaded, not when every worker's are). Returns the results framework by framework
        (`streams` order), each in the order its iterable gave them; events as run_passes."""
        emit = on_event or (lambda _ev: None)
        self._stop.clear()
        self._flight.new_run()
        return self._run_batch(
            [],
            lambda res: emit(ResultArrived(res)),
            lambda req: emit(OpStarted(req)),
            streams=streams,
        )

    def _run_checks(self, requests, results, on_checks) -> list[RunResult]:
        """The CHECKS pass. A run that fails here leaves its checks skipped, with why."""
        merge = ChecksMerge(requests, results, on_checks)
        if merge.pending and not self._stop.is_set():
            self._run_batch(merge.pending, merge.deliver, None)
        return merge.results

    def _run_batch(
        self, requests, on_result, on_start, background=False, quick=None, first=None, streams=None
    ) -> list[RunResult]:
        """Each framework's requests in its own thread, in order. `first`: (requests, on_result)
        of the app's quick pass: each framework's thread runs its share of it first (its worker
        keeps what it made) and goes straight on to its share of `requests`, without waiting
        for the other framework's quick pass; their numeric passes find the quick results in
        `quick` (filled by that on_result). `streams` ({framework: iterable}, instead of
        `requests`): each framework's requests as its iterable gives them (run_streams)."""
        by_fw = by_framework(requests)
        first_by_fw = by_framework(first[0]) if first else {}
        results: list[RunResult | None] = [None] * len(requests)

        def one(fw: str, req: RunRequest, keep: bool) -> RunResult:
            key = OpKey.of_request(req)
            skipped = self._flight.begin(fw, key)
            # only a request with numeric had a quick pass: one without it whose request
            # equals that quick pass must not take it (nor its kept run)
            earlier = (
                quick.get(without_numeric(req))
                if quick is not None and not keep and Mode.NUMERIC in req.settings.modes
                else None
            )
            if self._stop.is_set():
                res = _failed(
                    req, ErrorInfo("Cancelled", "the run was cancelled", kind=ErrorKind.CANCELLED)
                )
            elif skipped:
                res = _failed(
                    req, ErrorInfo("Cancelled", "skipped by the user", kind=ErrorKind.CANCELLED)
                )
            else:
                if on_start is not None:
                    on_start(req)
                if earlier is not None:
                    res = self._run_numeric(req, earlier, stop=self._stop)
                else:
                    res = self.run_one(req, background and not keep, keep, stop=self._stop)
            skipped = self._flight.end(fw, key)
            if skipped and res.error is not None and res.error.kind == ErrorKind.CANCELLED:
                res = replace(res, error=replace(res.error, message="skipped by the user"))
            if (
                res.error is not None
                and res.error.kind == ErrorKind.CANCELLED
                and earlier is not None
            ):
                # its quick pass came back and was shown: a cancel takes only what was left
                res = numeric_cancelled(earlier, req, skipped)
            return res

        streamed: dict[str, list[RunResult]] = {fw: [] for fw in streams or ()}

        def work(fw: str) -> None:
            for i in first_by_fw.get(fw, ()):
                first[1](one(fw, first[0][i], True))
            for i in by_fw.get(fw, ()):
                results[i] = res = one(fw, requests[i], False)
                if on_result is not None:
                    on_result(res)
            for req in (streams or {}).get(fw, ()):
                streamed[fw].append(res := one(fw, req, False))
                if on_result is not None:
                    on_result(res)

        in_parallel(work, list(dict.fromkeys([*first_by_fw, *by_fw, *streamed])))
        return [r for r in results if r is not None] + [r for rs in streamed.values() for r in rs]

    def run_one(
        self,
        req: RunRequest,
        background: bool = False,
        keep: bool = False,
        stop: threading.Event | None = None,
    ) -> RunResult:
        """Run one request; a failure of any kind comes back as a RunResult with status error.
        `background`: its numeric reference runs at a lower CPU priority in the worker. `keep`:
        the worker keeps what it made for the numeric pass of the same request. `stop` (run()
        passes its cancel event): set, the request ends as cancelled."""
        kind = "run:keep" if keep else "run:background" if background else "run"
        return self._call_run(req, kind, stop)

    def _run_numeric(
        self, req: RunRequest, quick: RunResult, stop: threading.Event | None = None
    ) -> RunResult:
        """The NUMERIC pass of `req` whose QUICK pass gave `quick`: the worker's NumericReply
        holds the numeric part only when it kept that pass (else the whole run). A call that
        fails (timeout, crash, memory kill) keeps the quick pass, its numeric mode that failure:
        the window showed custom and default already (a cancel is left to the caller)."""

        def joined(reply: NumericReply) -> RunResult:
            return reply.result if reply.whole else with_numeric(quick, reply.result, req)

        def failed(res: RunResult) -> RunResult:
            if res.error is not None and res.error.kind not in (
                ErrorKind.CANCELLED,
                ErrorKind.UNAVAILABLE,
            ):
                return numeric_failed(quick, res, req)
            return res

        return self._call_run(req, "run:numeric", stop, "the numeric pass", joined, failed)

    def _call_run(
        self,
        req: RunRequest,
        kind: str,
        stop: threading.Event | None,
        what: str = "",
        reply: Callable = _as_is,
        failed: Callable[[RunResult], RunResult] = _as_is,
    ) -> RunResult:
        """The RunResult of one worker request: `reply(the worker's reply)` (a RunResult, for
        "run:numeric" a NumericReply), else `failed(the failure as a RunResult)`. `what` names
        what the worker was doing in a failure's message (default: the op)."""
        if req.framework not in self.workers:
            return failed(
                _failed(req, ErrorInfo("UnknownFramework", f"no worker for {req.framework!r}"))
            )
        t0 = time.perf_counter()
        try:
            return reply(self.workers[req.framework].call(kind, req, req.settings.timeout, stop))
        except (WorkerFailure, RuntimeError) as exc:
            err = failure_info(exc, what or req.qualname, req.framework, req.settings.timeout)
        return failed(replace(_failed(req, err), elapsed=time.perf_counter() - t0))

    def skip(self, key: tuple, wait: float = 10.0) -> None:
        """Skip one op, key (framework, file, qualname), of the run going on: if its worker runs
        it now, the op is interrupted (its worker kept unless it does not answer); no later
        pass runs it; the rest of the run goes on. Returns once the op is no longer running (at
        most `wait` s)."""
        deadline = time.monotonic() + wait
        self._flight.skip(key)
        while time.monotonic() < deadline:
            # set again while it runs: a call just starting clears an earlier cancel
            if not self._flight.while_running(key, lambda: self.workers[key[0]].cancel()):
                return
            time.sleep(0.05)

    def cancel(self) -> None:
        """Stop the runs in flight (interrupted; a worker that does not answer is replaced) and
        skip the rest."""
        self._stop.set()
        for w in self.workers.values():
            w.cancel()


def _failed(req: RunRequest, err: ErrorInfo) -> RunResult:
    return RunResult(request=req, op=None, status="error", error=err)
