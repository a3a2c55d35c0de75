"""torch-vs-tf parity of the shown pair, computed off the GUI thread.

compare.parity runs pair_metrics over every tensor and mode of both frameworks: ~0.2 s per
10^6-element tensor, which froze the window when it ran in show_pair. Here one thread takes
the newest request only (a request superseded while waiting is dropped) and hands the rows back
through a queued signal; its owner stops and joins it with close(); the last few answers are
cached by the identity of the results they were made from (weak references: the cache never
keeps an old run's arrays alive), so showing a pair again costs nothing.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

# below this many elements over all tensors parity costs well under a millisecond: done in place
INLINE_ELEMENTS = 20_000
CACHE_SIZE = 8


def parity_rows(pair: str, results) -> list:
    """compare.parity of `results` under the pair's name (each framework's op may be named
    differently; the row is about the pair)."""
    from gradviz.app.analysis import result_as_pair
    from gradviz.compare import parity

    return parity([result_as_pair(r, pair) for r in results])


def _elements(results) -> int:
    n = 0
    for r in results:
        for t in r.tensors:
            for g in t.grads.values():
                n += getattr(g, "size", 0)
            n += getattr(t.value, "size", 0)
    return n


class ParityWorker(QObject):
    """rows(pair, results) -> rows now, or None while they are computed; `ready` brings them."""

    ready = Signal(str, object, object)  # pair, tuple of results, list[ParityRow]

    def __init__(self, compute: Callable | None = None, parent=None):
        super().__init__(parent)
        self._compute = compute or parity_rows
        self._cache: list[tuple[str, tuple, list]] = []  # (pair, weakrefs, rows), newest last
        self._lock = threading.Lock()
        self._wanted: tuple[str, tuple] | None = None  # newest request not yet answered
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    def cached(self, pair: str, results: tuple) -> list | None:
        for p, refs, rows in reversed(self._cache):
            if (
                p == pair
                and len(refs) == len(results)
                and all(a() is b for a, b in zip(refs, results))
            ):
                return rows
        return None

    def rows(self, pair: str, results) -> list | None:
        """The parity rows of `results` if known or cheap; else None, and `ready` follows."""
        results = tuple(results)
        hit = self.cached(pair, results)
        if hit is not None:
            return hit
        if _elements(results) <= INLINE_ELEMENTS:
            rows = self._compute(pair, results)
            self._remember(pair, results, rows)
            return rows
        with self._lock:
            self._wanted = (pair, results)
        if self._closed:
            return None
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="gradviz-gui-parity", daemon=True
            )
            self._thread.start()
        self._wake.set()
        return None

    def _remember(self, pair: str, results: tuple, rows: list) -> None:
        try:
            refs = tuple(weakref.ref(r) for r in results)
        except TypeError:  # not weak-referenceable: not cached
            return
        live = [e for e in self._cache if all(ref() is not None for ref in e[1])]
        self._cache = (live + [(pair, refs, rows)])[-CACHE_SIZE:]

    def close(self, timeout: float = 10.0) -> bool:
        """Stop the thread after the computation under way (if any); True once it has ended."""
        self._closed = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def _loop(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                return
            with self._lock:
                job, self._wanted = self._wanted, None
            if job is None:
                continue
            pair, results = job
            try:
                rows = self._compute(pair, results)
            except Exception as exc:  # noqa: BLE001 - a bug in compare must not kill the thread
                from gradviz.compare.torch_vs_tf import ParityRow

                rows = [ParityRow(pair, "", "", "error", None, f"{type(exc).__name__}: {exc}")]
            self.ready.emit(pair, results, rows)

    def accept(self, pair: str, results: tuple, rows: list) -> None:
        """Called on the GUI thread with an answer: cache it."""
        if self.cached(pair, results) is None:
            self._remember(pair, results, rows)
