"""Watch the loaded op files; after an edit settles (debounced), report which files changed.

Editors often save by writing a new file and renaming it over the old one, which drops the
path from QFileSystemWatcher: the path is re-added whenever it exists again. A file deleted and
made again later (a checkout, a build step) is noticed through its folder, which is watched too.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from gradviz.module_files import read_op_source


class FileWatcher(QObject):
    filesChanged = Signal(object)  # sorted list of paths

    def __init__(self, debounce_ms: int = 300, parent=None):
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._on_change)
        self._watcher.directoryChanged.connect(self._on_folder)
        self._pending: set[str] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._flush)
        self._stamps: dict[str, tuple] = {}
        self.enabled = True

    def watch(self, paths) -> None:
        for p in paths:
            p = os.path.abspath(p)
            self._stamps[p] = _stamp(p)
            if os.path.exists(p) and p not in self._watcher.files():
                self._watcher.addPath(p)
            folder = os.path.dirname(p)
            if os.path.isdir(folder) and folder not in self._watcher.directories():
                self._watcher.addPath(folder)

    def watched(self) -> list[str]:
        return sorted(self._stamps)

    def unwatch(self, path: str) -> None:
        """Stop watching a file the user removed from the list."""
        path = os.path.abspath(path)
        self._stamps.pop(path, None)
        self._pending.discard(path)
        if path in self._watcher.files():
            self._watcher.removePath(path)

    def _on_folder(self, folder: str) -> None:
        """A file came or went in a folder of a watched file: one deleted earlier is back."""
        for p in self._stamps:
            if (
                os.path.dirname(p) == folder
                and os.path.exists(p)
                and p not in self._watcher.files()
            ):
                self._on_change(p)

    def _on_change(self, path: str) -> None:
        if path not in self._stamps:
            return
        self._pending.add(path)
        self._timer.start()

    def _flush(self) -> None:
        changed = []
        for p in sorted(self._pending):
            if os.path.exists(p) and p not in self._watcher.files():
                self._watcher.addPath(p)
            stamp = _stamp(p)
            if stamp != self._stamps.get(p):  # a touch without a change is not a reason to re-run
                self._stamps[p] = stamp
                changed.append(p)
        self._pending.clear()
        if changed and self.enabled:
            self.filesChanged.emit(changed)


def _stamp(path: str) -> tuple:
    try:
        st = os.stat(path)
        return (st.st_size, hash(read_op_source(path)))  # a regular file, read with a bound
    except OSError:
        return ()
