"""Progress of the running batch: each op's state (queued, running, ok, error, cancelled), when
it started, how many are done."""

from __future__ import annotations

import time

from gradviz.model import OpKey
from gradviz.vocab import ErrorKind

QUEUED, RUNNING, OK, ERROR, CANCELLED = "queued", "running", "ok", "error", "cancelled"


def final_state(result) -> str:
    """A run whose numeric pass was cancelled is cancelled too, though its custom and default
    came back: it was not checked (DESIGN.md: a match needs numeric where it was asked for).
    One whose numeric mode failed (raised, timed out, crashed its worker) failed: the user must
    see a timeout, and custom was not checked either."""
    if result.error is not None and result.error.kind == ErrorKind.CANCELLED:
        return CANCELLED
    if result.numeric_cancelled:
        return CANCELLED
    if result.numeric_failed:
        return ERROR
    return OK if result.status == "ok" else ERROR


class RunProgress:
    def __init__(self) -> None:
        self.keys: list[OpKey] = []  # ops of the running (or last) batch
        self.states: dict[tuple, str] = {}  # every op ever run: its latest state
        self.started_at: dict[tuple, float] = {}  # time.monotonic() its run began
        self.in_flight: dict[str, OpKey] = {}  # framework -> the op its worker runs now
        self.stage: dict[tuple, str] = {}  # "partial" / "final": what came back in this batch
        self._passes: dict[tuple, int] = {}  # passes its worker took in this batch
        self._done: set = set()

    def begin(self, keys) -> None:
        self.keys = list(keys)
        self._done = set()
        self.in_flight = {}
        self.stage = {}
        self._passes = {}
        for k in self.keys:
            self.states[k] = QUEUED
            self.started_at.pop(k, None)

    def running(self, key, restart: bool = False) -> None:
        """`restart`: its worker has just taken it (each pass has its own timeout)."""
        self.states[key] = RUNNING
        if restart:
            self.started_at[key] = time.monotonic()
            self.in_flight[key[0]] = key
            self._passes[key] = self._passes.get(key, 0) + 1
        else:
            self.started_at.setdefault(key, time.monotonic())

    def returned(self, key, stage: str) -> None:
        """Its worker gave a result (partial or final): it is no longer in flight, unless this
        is the quick pass's and the worker has taken its numeric pass already (the partial is
        analysed before it reaches the window, the start of the next pass is not: Skip this op
        found nothing running through a whole numeric pass)."""
        self.stage[key] = stage
        if stage == "partial" and self._passes.get(key, 0) > 1:
            return
        if self.in_flight.get(key[0]) == key:
            del self.in_flight[key[0]]

    def finished(self, key, state: str) -> None:
        self.states[key] = state
        if key in self.keys:
            self._done.add(key)

    @property
    def done(self) -> int:
        return len(self._done)

    def elapsed(self, key) -> float | None:
        t = self.started_at.get(key)
        return None if t is None else time.monotonic() - t

    @property
    def total(self) -> int:
        return len(self.keys)
