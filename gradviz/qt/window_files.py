"""The window's op files: opening them (dialogs, recent, trap examples, drops), loading and
reloading them in the workers, taking one off the list, and re-running what a watched file's
change touched."""
from __future__ import annotations

import os

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFileDialog

from gradviz.qt.file_watcher import FileWatcher


class FileControl:
    def __init__(self, win) -> None:
        self.win = win
        self.watcher = FileWatcher(parent=win)
        self.watcher.enabled = win.act_watch.isChecked()
        self._opened: list[str] = []   # files the user just opened: their first op is shown

    def connect(self) -> None:
        win = self.win
        win.bridge.catalogsReady.connect(self.catalogs)
        win.state.subscribe("files", self.files_shown)
        win.tree.removeRequested.connect(win.remove_file)
        self.watcher.filesChanged.connect(self.files_changed)
        win.act_watch.toggled.connect(self.watch_toggled)

    def load(self, files) -> None:
        state = self.win.state
        if not files:
            if state.run_when_loaded:
                QTimer.singleShot(0, lambda: self.catalogs([], ()))
            return
        state.loading_started()
        self.win.summary.setText(f"loading {len(files)} file(s)…")
        self.win.bridge.load(files)

    def open_files(self, paths, module_names=None) -> None:
        for p in paths:
            self.win.recent.add(os.path.abspath(p))
        new = self.win.state.open(paths, module_names)
        if new:
            self._opened = [os.path.abspath(p) for p in new]
            self.load(new)

    def open_dialog(self) -> None:
        win = self.win
        start = win.qs.value("files/last_dir", os.getcwd())
        paths, _ = QFileDialog.getOpenFileNames(win, "Open op files", start, "Python files (*.py)")
        if paths:
            win.qs.setValue("files/last_dir", os.path.dirname(paths[0]))
            self.open_files(paths)

    def open_module_dialog(self) -> None:
        from gradviz.qt.open_module import ask_module_file
        win = self.win
        path, name = ask_module_file(win, str(win.qs.value("files/last_module", "")))
        if path:
            win.qs.setValue("files/last_module", name)
            self.open_files([path], {path: name})

    def catalogs(self, catalogs, files) -> None:
        win = self.win
        self.watcher.watch(files)
        if win.diagnostics.show_load(catalogs, files):
            win.tabs.setCurrentWidget(win.diagnostics)
        keys, first = win.state.catalogs_arrived(catalogs, files)
        loaded = win.state.loaded
        text = f"{len(loaded.files)} file(s), {len(loaded.ops)} op(s)"
        hidden = len(loaded.ops) - len(win.tree.visible_keys())
        if win.op_filter.text() and hidden:     # a dropped file's ops may be among them
            text += f" — the filter '{win.op_filter.text()}' hides {hidden} (Esc in it clears it)"
        win.summary.setText(text)
        self._show_opened(files)
        win.catalogsLoaded.emit()
        if keys is not None and not win.run(keys) and first:
            win.runDone.emit([])
        win.show_pair(win.tree.current_pair())

    def _show_opened(self, files) -> None:
        """A file the user just opened (File ▸ Open, recent, a drop): its first op is selected
        (the grid went on showing whatever was selected before)."""
        loaded = self.win.state.loaded
        done = {os.path.abspath(f) for f in files}
        opened = [f for f in self._opened if f in done]
        if not opened:
            return
        self._opened = [f for f in self._opened if f not in done]
        keys = [k for k in loaded.ordered_keys() if k[1] in opened]
        if keys:
            self.win.tree.select_pair(loaded.pair_name(keys[0]))

    def remove_file(self, path: str) -> None:
        """Take a file off the list: its ops, results, diagnostics and watch go with it."""
        win = self.win
        win.state.remove_file(path)
        self.watcher.unwatch(path)
        win.diagnostics.clear_file(os.path.abspath(path))
        win.summary.setText(f"removed {os.path.basename(path)}")
        win.refresh_view()

    def files_shown(self) -> None:
        self.win.tree.refresh()

    def files_changed(self, files) -> None:
        self.win.log.note(f"changed: {', '.join(os.path.basename(f) for f in files)} "
                          "— reloading and re-running")
        self.win.state.files_changed(files)
        self.load(files)

    def watch_toggled(self, on: bool) -> None:
        self.win.qs.setValue("run/watch", "true" if on else "false")
        self.watcher.enabled = on

    @staticmethod
    def accepts_drag(ev) -> bool:
        return any(u.isLocalFile() and (u.toLocalFile().endswith(".py") or os.path.isdir(u.toLocalFile()))
                   for u in ev.mimeData().urls())

    def drop(self, ev) -> None:
        """Dropped .py files, and the .py files of dropped folders (app.op_files)."""
        from gradviz.app.op_files import op_files
        paths, note = op_files(u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile())
        if note:
            self.win.note("open", note)
        if paths:
            self.open_files(paths)
            ev.acceptProposedAction()
