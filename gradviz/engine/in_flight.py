"""Which op each framework's worker runs now, and which ops the user skipped in this run.

One lock for both: a skip must see, and cancel, the op it names in the same moment a worker's
thread takes it or lets it go."""

from __future__ import annotations

import threading
from collections.abc import Callable


class InFlight:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._skipped: set[tuple] = set()  # ops skipped in this run: no later pass runs them
        self._running: dict[str, tuple] = {}  # framework -> the op its worker runs now

    def new_run(self) -> None:
        with self._lock:
            self._skipped.clear()

    def skip(self, key: tuple) -> None:
        with self._lock:
            self._skipped.add(key)

    def begin(self, fw: str, key: tuple) -> bool:
        """`key` is running in `fw`'s worker, unless it was skipped (then True, and it is not)."""
        with self._lock:
            if key in self._skipped:
                return True
            self._running[fw] = key
            return False

    def end(self, fw: str, key: tuple) -> bool:
        """`fw`'s worker is done; whether `key` was skipped meanwhile."""
        with self._lock:
            self._running.pop(fw, None)
            return key in self._skipped

    def while_running(self, key: tuple, action: Callable[[], None]) -> bool:
        """`action()` if `key` is running now (under the lock, so it cannot end meanwhile);
        whether it was."""
        with self._lock:
            if self._running.get(key[0]) != key:
                return False
            action()
            return True
