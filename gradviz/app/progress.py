"""Progress of the running batch: each op's state (queued, running, ok, error, cancelled), when
it started, how many are done."""
from __future__ import annotations

import time
from typing import Optional

QUEUED, RUNNING, OK, ERROR, CANCELLED = "queued", "running", "ok", "error", "cancelled"


def final_state(result) -> str:
    if result.error is not None and result.error.kind == "cancelled":
        return CANCELLED
    return OK if result.status == "ok" else ERROR


class RunProgress:
    def __init__(self) -> None:
        self.keys: list[tuple] = []                  # ops of the running (or last) batch
        self.states: dict[tuple, str] = {}           # every op ever run: its latest state
        self.started_at: dict[tuple, float] = {}     # time.monotonic() its run began
        self._done: set = set()

    def begin(self, keys) -> None:
        self.keys = list(keys)
        self._done = set()
        for k in self.keys:
            self.states[k] = QUEUED
            self.started_at.pop(k, None)

    def running(self, key) -> None:
        self.states[key] = RUNNING
        self.started_at.setdefault(key, time.monotonic())

    def finished(self, key, state: str) -> None:
        self.states[key] = state
        if key in self.keys:
            self._done.add(key)

    @property
    def done(self) -> int:
        return len(self._done)

    def elapsed(self, key) -> Optional[float]:
        t = self.started_at.get(key)
        return None if t is None else time.monotonic() - t

    @property
    def total(self) -> int:
        return len(self.keys)
