"""The engine as the CLI and the GUI see it: load files, list devices, run ops, cancel.

Qt-free and framework-free. One warm Worker per framework; runs of the two frameworks go on in
parallel (one thread each), ops of one framework one after another in its worker.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Callable, Iterable, Optional

from gradviz.engine.pool import (Cancelled, Worker, WorkerCrashed, WorkerState, WorkerTimeout,
                                 WorkerUnavailable)
from gradviz.model import FRAMEWORKS, ErrorInfo, FileCatalog, RunRequest, RunResult
from gradviz.discover import frameworks_used

DISCOVER_TIMEOUT = 60.0


class Engine:
    def __init__(self, frameworks: Iterable[str] = FRAMEWORKS,
                 on_state: Optional[Callable[[WorkerState], None]] = None, start: bool = True):
        self.frameworks = tuple(frameworks)
        self.workers = {fw: Worker(fw, on_state) for fw in self.frameworks}
        self._stop = threading.Event()
        if start:
            self.start()

    def start(self, frameworks: Optional[Iterable[str]] = None) -> None:
        for fw in frameworks or self.frameworks:
            self.workers[fw].start()

    def states(self) -> dict[str, WorkerState]:
        return {fw: w.status for fw, w in self.workers.items()}

    def close(self) -> None:
        for w in self.workers.values():
            w.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- discovery -----------------------------------------------------------------------------
    def discover(self, files: Iterable[str]) -> list[FileCatalog]:
        """Ops of each file, per framework it uses. A file that fails to load gives a catalog with
        `error` set. Files are sent only to the workers of the frameworks they import."""
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
            if not jobs[fw]:
                results[fw] = []
                return
            try:
                results[fw] = self.workers[fw].call("discover", jobs[fw], DISCOVER_TIMEOUT)
            except (WorkerTimeout, WorkerCrashed, WorkerUnavailable, Cancelled) as exc:
                err = _worker_error(exc, "loading the file")
                results[fw] = [FileCatalog(f, fw, (), err) for f in jobs[fw]]

        _in_parallel(work, self.frameworks)
        for fw in self.frameworks:
            out.extend(results.get(fw, []))
        order = {f: i for i, f in enumerate(files)}
        out.sort(key=lambda c: (order.get(c.file, 0), c.framework))
        return out

    def devices(self) -> dict[str, dict]:
        """{framework: {"devices": [{"name", "kind", "available", "reason"}], "error": str|None}}."""
        out: dict[str, dict] = {}

        def work(fw: str) -> None:
            try:
                out[fw] = {"devices": self.workers[fw].call("devices", None, 60.0), "error": None}
            except (WorkerTimeout, WorkerCrashed, WorkerUnavailable, Cancelled) as exc:
                out[fw] = {"devices": [], "error": str(exc)}

        _in_parallel(work, self.frameworks)
        return {fw: out[fw] for fw in self.frameworks}

    # --- runs ----------------------------------------------------------------------------------
    def run(self, requests: Iterable[RunRequest],
            on_result: Optional[Callable[[RunResult], None]] = None,
            on_start: Optional[Callable[[RunRequest], None]] = None) -> list[RunResult]:
        """Run every request; each failure (error, timeout, crash, cancel) is a result too.
        Results come back in request order; `on_result` is called as each one arrives (from a
        worker thread)."""
        requests = list(requests)
        self._stop.clear()
        by_fw: dict[str, list[int]] = {}
        for i, r in enumerate(requests):
            by_fw.setdefault(r.framework, []).append(i)
        results: list[Optional[RunResult]] = [None] * len(requests)

        def work(fw: str) -> None:
            for i in by_fw[fw]:
                req = requests[i]
                if self._stop.is_set():
                    res = _failed(req, ErrorInfo("Cancelled", "the run was cancelled", kind="cancelled"))
                else:
                    if on_start is not None:
                        on_start(req)
                    res = self.run_one(req)
                results[i] = res
                if on_result is not None:
                    on_result(res)

        _in_parallel(work, list(by_fw))
        return [r for r in results if r is not None]

    def run_one(self, req: RunRequest) -> RunResult:
        if req.framework not in self.workers:
            return _failed(req, ErrorInfo("UnknownFramework", f"no worker for {req.framework!r}"))
        t0 = time.perf_counter()
        try:
            return self.workers[req.framework].call("run", req, req.settings.timeout)
        except WorkerTimeout:
            err = ErrorInfo("Timeout", f"{req.qualname} did not finish within "
                            f"{req.settings.timeout:g} s; its worker was stopped and replaced",
                            kind="timeout")
        except Cancelled:
            err = ErrorInfo("Cancelled", "the run was cancelled; its worker was replaced",
                            kind="cancelled")
        except WorkerCrashed as exc:
            err = ErrorInfo("Crashed", f"{req.qualname} crashed its {req.framework} worker: {exc}",
                            kind="crashed")
        except WorkerUnavailable as exc:
            err = ErrorInfo("FrameworkUnavailable", f"{req.framework} could not be loaded: {exc}",
                            kind="unavailable")
        res = _failed(req, err)
        return RunResult(**{**vars(res), "elapsed": time.perf_counter() - t0})

    def cancel(self) -> None:
        """Stop the runs in flight (their workers are killed and replaced) and skip the rest."""
        self._stop.set()
        for w in self.workers.values():
            w.cancel()


def _failed(req: RunRequest, err: ErrorInfo) -> RunResult:
    return RunResult(request=req, op=None, status="error", error=err)


def _worker_error(exc: Exception, doing: str) -> ErrorInfo:
    if isinstance(exc, WorkerTimeout):
        return ErrorInfo("Timeout", f"{doing} did not finish in time ({exc})", kind="timeout")
    if isinstance(exc, WorkerCrashed):
        return ErrorInfo("Crashed", f"{doing} crashed the worker: {exc}", kind="crashed")
    if isinstance(exc, WorkerUnavailable):
        return ErrorInfo("FrameworkUnavailable", str(exc), kind="unavailable")
    return ErrorInfo("Cancelled", "cancelled", kind="cancelled")


def _in_parallel(fn: Callable[[str], None], keys: Iterable[str]) -> None:
    threads = [threading.Thread(target=fn, args=(k,), daemon=True) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
