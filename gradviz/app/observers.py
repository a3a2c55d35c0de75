"""Plain-callback observers: the app state tells whoever listens (the window, a test) what
changed, without knowing who they are or importing Qt."""

from __future__ import annotations

from collections.abc import Callable


class Observers:
    def __init__(self) -> None:
        self._listeners: dict[str, list[Callable]] = {}

    def subscribe(self, event: str, listener: Callable) -> Callable[[], None]:
        """Call `listener(*args)` on each `event`; returns the function that unsubscribes."""
        self._listeners.setdefault(event, []).append(listener)
        return lambda: self._listeners.get(event, []).remove(listener)

    def emit(self, event: str, *args) -> None:
        for listener in list(self._listeners.get(event, ())):
            listener(*args)
