"""The engine as the CLI and the GUI see it: load files, list devices, run ops, cancel.

Qt-free and framework-free. One warm Worker per framework; runs of the two frameworks go on in
parallel (one thread each), ops of one framework one after another in its worker.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from typing import Callable, Iterable, Optional

from gradviz.engine.errors import Cancelled, WorkerFailure, WorkerUnavailable
from gradviz.engine.failures import failure_info
from gradviz.engine.numeric_pass import numeric_cancelled, numeric_failed, with_numeric
from gradviz.engine.worker import Worker, WorkerState
from gradviz.import_scan import frameworks_used
from gradviz.model import (
    CHECK_CANCELLED,
    CHECKS,
    FRAMEWORKS,
    CheckResult,
    ErrorInfo,
    FileCatalog,
    OpKey,
    RunRequest,
    RunResult,
)
from gradviz.vocab import CheckStatus, ErrorKind, Mode

LOAD_TIMEOUT = 60.0


class Engine:
    def __init__(self, frameworks: Iterable[str] = FRAMEWORKS,
                 on_state: Optional[Callable[[WorkerState], None]] = None, start: bool = True):
        self.frameworks = tuple(frameworks)
        self.workers = {fw: Worker(fw, on_state) for fw in self.frameworks}
        self._stop = threading.Event()   # skip the rest of the run (cancel, close)
        self._closed = False
        self._skipped: set[tuple] = set()          # ops skipped in this run: no later pass runs them
        self._in_flight: dict[str, tuple] = {}     # framework -> the op its worker runs now
        self._flight_lock = threading.Lock()
        if start:
            self.start()

    def start(self, frameworks: Optional[Iterable[str]] = None) -> None:
        self._closed = False
        for fw in frameworks or self.frameworks:
            self.workers[fw].start()

    def follow_output(self, listener: Callable[[str, str], None],
                      replay: bool = False) -> Callable[[], None]:
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
    def load(self, files: Iterable[str], timeout: float = LOAD_TIMEOUT) -> list[FileCatalog]:
        """Ops of each file, per framework it uses. A file that fails to load gives a catalog with
        `error` set. Files are sent only to the workers of the frameworks they import.
        `timeout` bounds importing the files of one framework (a module may hang at import)."""
        files = [os.path.abspath(f) for f in files]
        jobs: dict[str, list[str]] = {fw: [] for fw in self.frameworks}
        out: list[FileCatalog] = []
        for f in files:
            used, err = frameworks_used(f)
            if err is not None:
                out.append(FileCatalog(f, "", (), err))
                continue
            for fw in used:
                if fw in jobs:
                    jobs[fw].append(f)
        results: dict[str, list[FileCatalog]] = {}

        def work(fw: str) -> None:
            results[fw] = self._load_in(fw, jobs[fw], timeout) if jobs[fw] else []

        _in_parallel(work, self.frameworks)
        for fw in self.frameworks:
            out.extend(results.get(fw, []))
        order = {f: i for i, f in enumerate(files)}
        out.sort(key=lambda c: (order.get(c.file, 0), c.framework))
        return out

    def _load_in(self, fw: str, files: list[str], timeout: float) -> list[FileCatalog]:
        """Import `files` in one call; when that kills the worker, blame the file the stack dump
        points at and load the others again (one at a time if the dump names none of them)."""
        try:
            return self.workers[fw].call("load", files, timeout)
        except (WorkerFailure, RuntimeError) as exc:   # RuntimeError: a bug in the worker
            err = replace(failure_info(exc, "loading the file", fw, timeout), kind=ErrorKind.LOAD)
            if len(files) == 1 or isinstance(exc, (WorkerUnavailable, Cancelled)) or \
                    self._closed:
                return [FileCatalog(f, fw, (), err) for f in files]
            blamed = [f for f in files if err.where.startswith(f + ":")]
            if blamed:
                rest = [f for f in files if f not in blamed]
                return ([FileCatalog(f, fw, (), err) for f in blamed]
                        + self._load_in(fw, rest, timeout))
            return [c for f in files for c in self._load_in(fw, [f], timeout)]

    def devices(self) -> dict[str, dict]:
        """{framework: {"devices": [{"name", "kind", "available", "reason"}], "error": str|None}}."""
        out: dict[str, dict] = {}

        def work(fw: str) -> None:
            try:
                out[fw] = {"devices": self.workers[fw].call("devices", None, 60.0), "error": None}
            except (WorkerFailure, RuntimeError) as exc:
                out[fw] = {"devices": [], "error": str(exc)}

        _in_parallel(work, self.frameworks)
        return {fw: out[fw] for fw in self.frameworks}

    # --- runs ----------------------------------------------------------------------------------
    def run(self, requests: Iterable[RunRequest],
            on_result: Optional[Callable[[RunResult], None]] = None,
            on_start: Optional[Callable[[RunRequest], None]] = None,
            on_partial: Optional[Callable[[RunResult], None]] = None,
            on_checks: Optional[Callable[[RunResult], None]] = None) -> list[RunResult]:
        """Run every request; each failure (error, timeout, crash, cancel) is a result too.
        Results come back in request order; `on_result` is called as each one arrives (from a
        worker thread).

        With `on_partial`, requests that include the numeric mode run in two passes: first every
        op without it (each result goes to `on_partial`, marked `partial`), then in full; each
        framework's worker goes on to its full pass as soon as its own first pass is done. The
        custom and default gradients of all ops show at once; the numeric reference, which costs
        hundreds of forward passes, fills in after.

        With `on_checks` too, contract checks (settings.checks) run in a last pass of their own,
        after every op's full result: each op's checks go to `on_checks` as they come, and are
        merged into the results returned. Without it, checks run inside each op's request."""
        requests = list(requests)
        self._stop.clear()
        self._skipped.clear()
        if on_checks is not None and on_partial is not None and \
                any(r.settings.checks for r in requests):
            results = self.run([_without_checks(r) for r in requests], on_result, on_start,
                               on_partial)
            return self._run_checks(requests, results, on_checks)
        if on_partial is not None:
            quick = [_without_numeric(r) for r in requests if Mode.NUMERIC in r.settings.modes]
            if quick:
                done: dict[RunRequest, RunResult] = {}

                def deliver(res: RunResult) -> None:
                    if res.status == "ok":  # a failure shows up again in the full pass
                        done[res.request] = res
                        on_partial(replace(res, partial=True))
                # An op is "running" from its first pass; its worker keeps what this pass made.
                # The full pass adds the numeric reference (numeric_pass), at low priority: the
                # window is painting the first pass meanwhile. Each worker goes on to it as soon
                # as its own quick pass is done (a worker waiting for the other sat idle).
                return self._run_batch(requests, on_result, on_start, background=True, quick=done,
                                       first=(quick, deliver))
        return self._run_batch(requests, on_result, on_start)

    def _run_checks(self, requests, results, on_checks) -> list[RunResult]:
        """The checks pass: the plain modes without numeric (a check that needs numeric computes
        it), then the checks. A run that fails here leaves its checks skipped, with why."""
        # not a skipped op's, nor one whose numeric pass hung or crashed its worker (its
        # float64 checks would most likely cost another timeout or crash)
        todo = [i for i, (req, res) in enumerate(zip(requests, results))
                if req.settings.checks and res.status == "ok" and not res.numeric_cancelled
                and not (res.numeric_failed and res.mode_errors[Mode.NUMERIC].kind != ErrorKind.ERROR)]
        merged = list(results)
        pending = [_checks_only(requests[i]) for i in todo]
        slots: dict[RunRequest, list[int]] = {}
        for i, req in zip(todo, pending):
            slots.setdefault(req, []).append(i)

        def deliver(res: RunResult) -> None:
            i = slots[res.request].pop(0)
            checks = res.checks if res.status == "ok" else _checks_skipped(res)
            merged[i] = replace(merged[i], checks=checks, request=requests[i])
            on_checks(merged[i])

        if pending and not self._stop.is_set():
            self._run_batch(pending, deliver, None)
        return merged

    def _run_batch(self, requests, on_result, on_start, background=False, quick=None,
                   first=None) -> list[RunResult]:
        """Each framework's requests in its own thread, in order. `first`: (requests, on_result)
        of the app's quick pass: each framework's thread runs its share of it first (its worker
        keeps what it made) and goes straight on to its share of `requests`, without waiting
        for the other framework's quick pass; their numeric passes find the quick results in
        `quick` (filled by that on_result)."""
        by_fw = _by_framework(requests)
        first_by_fw = _by_framework(first[0]) if first else {}
        results: list[Optional[RunResult]] = [None] * len(requests)

        def one(fw: str, req: RunRequest, keep: bool) -> RunResult:
            key = _op_key(req)
            with self._flight_lock:
                skipped = key in self._skipped
                if not skipped:
                    self._in_flight[fw] = key
            # only a request with numeric had a quick pass: one without it whose request
            # equals that quick pass must not take it (nor its kept run)
            earlier = quick.get(_without_numeric(req)) if quick is not None and not keep \
                and Mode.NUMERIC in req.settings.modes else None
            if self._stop.is_set():
                res = _failed(req, ErrorInfo("Cancelled", "the run was cancelled", kind=ErrorKind.CANCELLED))
            elif skipped:
                res = _failed(req, ErrorInfo("Cancelled", "skipped by the user", kind=ErrorKind.CANCELLED))
            else:
                if on_start is not None:
                    on_start(req)
                if earlier is not None:
                    res = self._run_numeric(req, earlier, stop=self._stop)
                else:
                    res = self.run_one(req, background and not keep, keep, stop=self._stop)
            with self._flight_lock:
                self._in_flight.pop(fw, None)
                skipped = key in self._skipped
                if skipped and res.error is not None and res.error.kind == ErrorKind.CANCELLED:
                    res = replace(res, error=replace(res.error, message="skipped by the user"))
            if res.error is not None and res.error.kind == ErrorKind.CANCELLED and earlier is not None:
                # its quick pass came back and was shown: a cancel takes only what was left
                res = numeric_cancelled(earlier, req, skipped)
            return res

        def work(fw: str) -> None:
            for i in first_by_fw.get(fw, ()):
                first[1](one(fw, first[0][i], True))
            for i in by_fw.get(fw, ()):
                results[i] = res = one(fw, requests[i], False)
                if on_result is not None:
                    on_result(res)

        _in_parallel(work, list(dict.fromkeys([*first_by_fw, *by_fw])))
        return [r for r in results if r is not None]

    def run_one(self, req: RunRequest, background: bool = False, keep: bool = False,
                stop: Optional[threading.Event] = None) -> RunResult:
        """Run one request; a failure of any kind comes back as a RunResult with status error.
        `background`: its numeric reference runs at a lower CPU priority in the worker. `keep`:
        the worker keeps what it made for the numeric pass of the same request. `stop` (run()
        passes its cancel event): set, the request ends as cancelled."""
        kind = "run:keep" if keep else "run:background" if background else "run"
        return self._call_run(req, kind, stop)

    def _run_numeric(self, req: RunRequest, quick: RunResult,
                     stop: Optional[threading.Event] = None) -> RunResult:
        """The numeric pass of `req` whose quick pass gave `quick`: the worker answers with the
        numeric part only when it kept that pass (else with the whole run). A call that fails
        (timeout, crash, memory kill) keeps the quick pass, its numeric mode that failure: the
        window showed custom and default already (a cancel is left to the caller)."""
        got = self._call_run(req, "run:numeric", stop, what="the numeric pass")
        if isinstance(got, RunResult):          # the call failed
            if got.error is not None and got.error.kind not in (ErrorKind.CANCELLED, ErrorKind.UNAVAILABLE):
                return numeric_failed(quick, got, req)
            return got
        kind, res = got
        return with_numeric(quick, res, req) if kind == "numeric" else res

    def _call_run(self, req: RunRequest, kind: str, stop: Optional[threading.Event],
                  what: str = ""):
        """`what` names what the worker was doing in a failure's message (default: the op)."""
        if req.framework not in self.workers:
            return _failed(req, ErrorInfo("UnknownFramework", f"no worker for {req.framework!r}"))
        t0 = time.perf_counter()
        try:
            return self.workers[req.framework].call(kind, req, req.settings.timeout, stop)
        except (WorkerFailure, RuntimeError) as exc:
            err = failure_info(exc, what or req.qualname, req.framework, req.settings.timeout)
        res = _failed(req, err)
        return RunResult(**{**vars(res), "elapsed": time.perf_counter() - t0})

    def skip(self, key: tuple, wait: float = 10.0) -> None:
        """Skip one op, key (framework, file, qualname), of the run going on: if its worker runs
        it now, the op is interrupted (its worker kept unless it does not answer); no later
        pass runs it; the rest of the run goes on. Returns once the op is no longer running (at
        most `wait` s)."""
        deadline = time.monotonic() + wait
        with self._flight_lock:
            self._skipped.add(key)
        while time.monotonic() < deadline:
            with self._flight_lock:
                if self._in_flight.get(key[0]) != key:
                    return
                # set again while it runs: a call just starting clears an earlier cancel
                self.workers[key[0]].cancel()
            time.sleep(0.05)

    def cancel(self) -> None:
        """Stop the runs in flight (interrupted; a worker that does not answer is replaced) and
        skip the rest."""
        self._stop.set()
        for w in self.workers.values():
            w.cancel()


def _by_framework(requests) -> dict[str, list[int]]:
    """Indexes of the requests of each framework, in order."""
    out: dict[str, list[int]] = {}
    for i, r in enumerate(requests):
        out.setdefault(r.framework, []).append(i)
    return out


def _op_key(req: RunRequest) -> OpKey:
    return OpKey.of_request(req)


def _without_numeric(req: RunRequest) -> RunRequest:
    modes = tuple(m for m in req.settings.modes if m != Mode.NUMERIC)
    return replace(req, settings=req.settings.with_(modes=modes))


def _without_checks(req: RunRequest) -> RunRequest:
    return replace(req, settings=req.settings.with_(checks=()))


def _checks_only(req: RunRequest) -> RunRequest:
    modes = tuple(m for m in req.settings.modes if m != Mode.NUMERIC) or (Mode.CUSTOM,)
    return replace(req, settings=req.settings.with_(modes=modes))


def _checks_skipped(res: RunResult) -> tuple:
    why = f"{CHECK_CANCELLED} ({res.error.message})" if res.error and res.error.kind == ErrorKind.CANCELLED \
        else f"the checks run failed: {res.error.one_line()}" if res.error else "the checks run failed"
    return tuple(CheckResult(n, CheckStatus.SKIP, why) for n in CHECKS if n in res.request.settings.checks)


def _failed(req: RunRequest, err: ErrorInfo) -> RunResult:
    return RunResult(request=req, op=None, status="error", error=err)


def _in_parallel(fn: Callable[[str], None], keys: Iterable[str]) -> None:
    threads = [threading.Thread(target=fn, args=(k,), daemon=True) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
