"""`gradviz run`'s ops as their files load: a framework's ops go to its worker as soon as that
framework's own files are in, not when every worker has loaded everything (a slow TensorFlow
import no longer holds the torch ops back); what needs every file (the whole run's order, its
total, an `--op` matched by the other framework's twin) follows once all are in."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator

from gradviz.catalog import pair_ops, requests_for, select
from gradviz.model import FileCatalog, RunRequest, RunResult, RunSettings


class OpsAsLoaded:
    """Each framework's requests, as engine.run_streams takes them: first the ops its own files
    surely give (pairing names are made per framework, so its files alone name them as the
    whole run does), then, once every file is in, the rest of that framework's share."""

    def __init__(self, frameworks: tuple[str, ...], names: list[str], settings: RunSettings):
        self._names, self._settings = names, settings
        self._ready = {fw: threading.Event() for fw in frameworks}
        self._early: dict[str, list[RunRequest]] = {}
        self._all = threading.Event()
        self._requests: list[RunRequest] = []
        self._given: dict[str, list[RunRequest]] = {fw: [] for fw in frameworks}

    def loaded(self, fw: str, catalogs: list[FileCatalog]) -> None:
        """engine.load's on_loaded: fw's files are in."""
        # an op `--op` names only through its twin in the other framework waits for that one
        chosen, _missing = select(pair_ops(catalogs), self._names)
        self._early[fw] = requests_for(chosen, (fw,), self._settings)
        self._ready[fw].set()

    def all_loaded(self, requests: list[RunRequest]) -> None:
        """Every file is in: the whole run, in its order (the first call counts; [] ends the
        streams, e.g. when loading failed)."""
        if self._all.is_set():
            return
        self._requests = list(requests)
        self._all.set()
        for ready in self._ready.values():  # a framework that never said
            ready.set()

    def stream(self, fw: str) -> Iterator[RunRequest]:
        self._ready[fw].wait()
        early = self._early.get(fw, [])
        for req in early:
            self._given[fw].append(req)
            yield req
        self._all.wait()
        taken = Counter(early)
        for req in self._requests:
            if req.framework != fw:
                continue
            if taken[req]:
                taken[req] -= 1
                continue
            self._given[fw].append(req)
            yield req

    def in_order(self, results: list[RunResult]) -> list[RunResult]:
        """run_streams' results (framework by framework, as given) in the run's order."""
        given = [req for reqs in self._given.values() for req in reqs]
        by_request: dict[RunRequest, list[RunResult]] = {}
        for req, res in zip(given, results, strict=True):
            by_request.setdefault(req, []).append(res)
        return [by_request[req].pop(0) for req in self._requests]


class HeldEvents:
    """The run's events held until `release`: its progress lines count to a total known once
    every file is in, and follow the load's errors, as they did when the ops waited for them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: list = []
        self._to: Callable | None = None
        self._released = False

    def __call__(self, event) -> None:
        with self._lock:  # the frameworks' threads: one line at a time, in the order they came
            if not self._released:
                self._held.append(event)
            elif self._to is not None:
                self._to(event)

    def release(self, to: Callable | None) -> None:
        with self._lock:
            self._released, self._to = True, to
            for event in self._held if to is not None else ():
                to(event)
            self._held.clear()


class InBackground(threading.Thread):
    """`fn()` in a thread; `result()` waits for it and returns its value (or raises its error)."""

    def __init__(self, fn: Callable, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self._fn, self._value, self._error = fn, None, None
        self.start()

    def run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised by result(), in the caller
            self._error = exc

    def result(self):
        self.join()
        if self._error is not None:
            raise self._error
        return self._value
