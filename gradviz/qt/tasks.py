"""Threads with an owner. A Task runs one blocking call on its own thread and reports back with
queued signals (started, returned, errored); whoever creates it owns it and joins it on close,
so no thread outlives the window that started it (superqt's workers follow the same idea).

The callbacks given to a task run on the owner's thread, through the task's own slots: a queued
call to a deleted task is dropped by Qt, never made into freed memory (a lambda connected to a
queued signal has no such guard).
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal


class Task(QObject):
    started = Signal()
    returned = Signal(object)  # what the call returned
    errored = Signal(str)  # "Type: message\ntraceback": a bug, never the user's code
    ended = Signal(object)  # this task, after returned or errored was handled

    def __init__(
        self,
        name: str,
        call: Callable[[], object],
        on_return: Callable[[object], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        parent=None,
    ):
        super().__init__(parent)
        self.name = name
        self._call = call
        self._on_return, self._on_error = on_return, on_error
        self._thread: threading.Thread | None = None
        self.returned.connect(self._handle_return)
        self.errored.connect(self._handle_error)

    def start(self) -> Task:
        self._thread = threading.Thread(target=self._run, name=f"gradviz-{self.name}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        self.started.emit()
        try:
            value = self._call()
        except Exception as exc:  # noqa: BLE001 - reported to the owner, not lost on a thread
            self.errored.emit(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        else:
            self.returned.emit(value)

    def _handle_return(self, value) -> None:
        if self._on_return is not None:
            self._on_return(value)
        self.ended.emit(self)

    def _handle_error(self, text: str) -> None:
        if self._on_error is not None:
            self._on_error(text)
        self.ended.emit(self)

    def release(self) -> None:
        self._call = self._on_return = self._on_error = None

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread to end; True when it has."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running()


class TaskGroup(QObject):
    """The owner of a set of tasks: starts them, forgets each once it has ended, and joins the
    rest on close."""

    errored = Signal(str)  # any task's error

    def __init__(self, parent=None):
        super().__init__(parent)
        self._tasks: list[Task] = []
        self.closed = False

    def start(
        self,
        name: str,
        call: Callable[[], object],
        on_return: Callable[[object], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> Task | None:
        """Run `call` on a thread; `on_return` / `on_error` then run on this object's thread.
        None once closed."""
        if self.closed:
            return None
        task = Task(name, call, on_return, on_error, self)
        task.errored.connect(self.errored)
        task.ended.connect(self._forget)
        self._tasks.append(task)
        return task.start()

    def _forget(self, task: Task) -> None:
        # The ended task lets go of its call (and what that holds); the small QObject itself
        # stays a child until the group goes: deleteLater() on it here crashed PySide 6.10
        # once the group was deleted ("shared QObject was deleted directly").
        if task in self._tasks and task.join(1.0):
            self._tasks.remove(task)
            task.release()

    def live(self) -> list[Task]:
        return [t for t in self._tasks if t.running()]

    def close(self, timeout: float) -> list[str]:
        """No new task starts; wait up to `timeout` s in all for the running ones. Returns the
        names of any still running (the caller has already asked them to stop)."""
        self.closed = True
        deadline = time.monotonic() + timeout
        for task in self._tasks:
            task.join(max(0.0, deadline - time.monotonic()))
        return [t.name for t in self._tasks if t.running()]
