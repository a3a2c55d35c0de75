"""The window's op files: opening them (dialogs, recent, trap examples, drops), loading and
reloading them in the workers, taking one off the list, and re-running what a watched file's
change touched."""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFileDialog

from gradviz.app.settings_schema import Key
from gradviz.qt.file_watcher import FileWatcher


class FileControl:
    """Opens, loads (through `bridge`), watches and removes `state`'s op files, the open-file
    dialogs as children of `parent` remembering their folders in `qs`, and `recent` told of each
    opened file; says how it went in `summary`, `log`, `diagnostics` (turning to `tabs`'
    Diagnostics on a load error) and `note(source, text)`; the loaded ops go to `tree` (its
    filter box `op_filter`) and `pair_view`, runs asked for by a load or a change go to `runs`;
    `on_loaded()` after each load, `on_done(results)` for a run a load wanted but could not
    start. `act_watch` turns the watch on and off."""

    def __init__(
        self,
        state,
        bridge,
        qs,
        recent,
        parent,
        *,
        summary,
        log,
        diagnostics,
        tabs,
        tree,
        op_filter,
        pair_view,
        runs,
        act_watch,
        note: Callable[[str, str], None],
        on_loaded: Callable[[], None],
        on_done: Callable[[list], None],
    ) -> None:
        self.state, self.bridge, self.qs, self.recent, self.parent = (
            state,
            bridge,
            qs,
            recent,
            parent,
        )
        self.summary, self.log, self.diagnostics, self.tabs = summary, log, diagnostics, tabs
        self.tree, self.op_filter, self.pair_view, self.runs = tree, op_filter, pair_view, runs
        self.act_watch, self.note, self.on_loaded, self.on_done = (
            act_watch,
            note,
            on_loaded,
            on_done,
        )
        self.watcher = FileWatcher(parent=parent)
        self.watcher.enabled = act_watch.isChecked()
        self._opened: list[str] = []  # files the user just opened: their first op is shown
        # the op shown when its file stopped loading (a save with a syntax error): shown again
        # once the file loads (the tree had moved on to another file's first op for good)
        self._lost: tuple[str, str] | None = None  # (pair, its file)

    def connect(self) -> None:
        self.bridge.catalogsReady.connect(self.catalogs)
        self.state.subscribe("files", self.files_shown)
        self.tree.removeRequested.connect(self.remove_file)
        self.watcher.filesChanged.connect(self.files_changed)
        self.act_watch.toggled.connect(self.watch_toggled)

    def load(self, files) -> None:
        state = self.state
        if not files:
            if state.run_when_loaded:
                QTimer.singleShot(0, lambda: self.catalogs([], ()))
            return
        state.loading_started()
        self.summary.setText(f"loading {len(files)} file(s)…")
        self.bridge.load(files)

    def open_files(self, paths, module_names=None) -> None:
        for p in paths:
            self.recent.add(os.path.abspath(p))
        new = self.state.open(paths, module_names)
        if new:
            self._opened = [os.path.abspath(p) for p in new]
            self.load(new)

    def open_dialog(self) -> None:
        start = self.qs.value(Key.LAST_DIR, os.getcwd())
        paths, _ = QFileDialog.getOpenFileNames(
            self.parent, "Open op files", start, "Python files (*.py)"
        )
        if paths:
            self.qs.setValue(Key.LAST_DIR, os.path.dirname(paths[0]))
            self.open_files(paths)

    def open_module_dialog(self) -> None:
        from gradviz.qt.open_module import ask_module_file

        path, name = ask_module_file(self.parent, str(self.qs.value(Key.LAST_MODULE, "")))
        if path:
            self.qs.setValue(Key.LAST_MODULE, name)
            self.open_files([path], {path: name})

    def catalogs(self, catalogs, files) -> None:
        self.watcher.watch(files)
        if self.diagnostics.show_load(catalogs, files):
            self.tabs.setCurrentWidget(self.diagnostics)
        shown = self.tree.current_pair()
        shown_files = {k[1] for k in self.state.loaded.keys_of(shown)} if shown else set()
        keys, first = self.state.catalogs_arrived(catalogs, files)
        loaded = self.state.loaded
        text = f"{len(loaded.files)} file(s), {len(loaded.ops)} op(s)"
        hidden = len(loaded.ops) - len(self.tree.visible_keys())
        if self.op_filter.text() and hidden:  # a dropped file's ops may be among them
            text += f" — the filter '{self.op_filter.text()}' hides {hidden} (Esc in it clears it)"
        self.summary.setText(text)
        self._show_opened(files)
        if self._lost is not None and shown not in (None, self._lost[0]):
            self._lost = None  # the user went on to another op meanwhile
        broken = sorted(f for f in shown_files if f in loaded.errors)
        if shown and shown not in loaded.pairs() and broken:
            self._lost = (shown, broken[0])
        if self._lost is not None and self._lost[0] in loaded.pairs():
            self.tree.select_pair(self._lost[0])  # the file loads again: back to its op
            self._lost = None
        self.on_loaded()
        if keys is not None and not self.runs.run(keys) and first:
            self.on_done([])
        if self._lost is not None and self._lost[1] in loaded.errors:
            # stay at the broken file, saying why its op is gone, rather than at another op
            pair, file = self._lost
            self.tree.select_file(file)
            self.pair_view.grid.show_message(
                f"{pair}: {os.path.basename(file)} did not load ({loaded.errors[file].one_line()}). "
                "Fix it and save: the op is shown again."
            )
            return
        self.pair_view.show(self.tree.current_pair())

    def _show_opened(self, files) -> None:
        """A file the user just opened (File ▸ Open, recent, a drop): its first op is selected
        (the grid went on showing whatever was selected before)."""
        loaded = self.state.loaded
        done = {os.path.abspath(f) for f in files}
        opened = [f for f in self._opened if f in done]
        if not opened:
            return
        self._opened = [f for f in self._opened if f not in done]
        keys = [k for k in loaded.ordered_keys() if k[1] in opened]
        if keys:
            self.tree.select_pair(loaded.pair_name(keys[0]))

    def remove_file(self, path: str) -> None:
        """Take a file off the list: its ops, results, diagnostics and watch go with it."""
        self.state.remove_file(path)
        self.watcher.unwatch(path)
        self.diagnostics.clear_file(os.path.abspath(path))
        self.summary.setText(f"removed {os.path.basename(path)}")
        self.pair_view.refresh()

    def files_shown(self) -> None:
        self.tree.refresh()

    def files_changed(self, files) -> None:
        self.log.note(
            f"changed: {', '.join(os.path.basename(f) for f in files)} — reloading and re-running"
        )
        self.state.files_changed(files)
        self.load(files)

    def watch_toggled(self, on: bool) -> None:
        self.qs.setValue(Key.WATCH, "true" if on else "false")
        self.watcher.enabled = on

    @staticmethod
    def accepts_drag(ev) -> bool:
        return any(
            u.isLocalFile() and (u.toLocalFile().endswith(".py") or os.path.isdir(u.toLocalFile()))
            for u in ev.mimeData().urls()
        )

    def drop(self, ev) -> None:
        """Dropped .py files, and the .py files of dropped folders (app.op_files)."""
        from gradviz.app.op_files import op_files

        paths, note = op_files(u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile())
        if note:
            self.note("open", note)
        if paths:
            self.open_files(paths)
            ev.acceptProposedAction()
