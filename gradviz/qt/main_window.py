"""The main window: op browser and run settings on the left, the gradient grid in the middle,
numbers / diagnostics / log below, worker states in the status bar.

It is a view: run state lives in gradviz.app.state.AppState (self.state). The window sends it what
the user and the engine did, and renders what it reports; the engine runs in workers behind
EngineBridge. Nothing here computes a gradient or a verdict.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QTimer, Signal
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel, QMainWindow, QMessageBox

from gradviz.app.open_list import Restored
from gradviz.app.settings_file import SettingsFile
from gradviz.app.settings_schema import Key
from gradviz.app.state import AppState
from gradviz.model import FRAMEWORKS
from gradviz.qt.about import app_icon, show_about
from gradviz.qt.engine_bridge import EngineBridge
from gradviz.qt.export_actions import WindowExports
from gradviz.qt.gui_gc import GuiGarbageCollector
from gradviz.qt.pair_view import PairView
from gradviz.qt.theme import FRAMEWORK_LABELS
from gradviz.qt.window_files import FileControl
from gradviz.qt.window_layout import build_layout
from gradviz.qt.window_menus import RecentFiles, build_menus, hook_exports
from gradviz.qt.window_runs import RunControl
from gradviz.qt.window_theme import build_theme_menu, follow_desktop, show_scheme
from gradviz.qt.worker_status import WorkerLabels


def _short_repr(value, n: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 1] + "…"


class MainWindow(QMainWindow):
    catalogsLoaded = Signal()  # a load finished and the tree shows it
    runDone = Signal(object)  # list[RunResult] of the batch

    def __init__(
        self,
        files=(),
        engine=None,
        qsettings: SettingsFile | None = None,
        frameworks=FRAMEWORKS,
        parent=None,
        remember_files: bool = False,
    ):
        """With `remember_files`, open the files saved by the last launch (`files` when none
        were saved) and keep the list saved for the next one (qt/remembered_files.py)."""
        super().__init__(parent)
        self.setWindowTitle("gradviz")
        self.setWindowIcon(app_icon())
        self.qs = qsettings if qsettings is not None else SettingsFile()  # parsed, never unpickled
        restored = None
        if remember_files:
            from gradviz.qt.remembered_files import read_saved

            restored = read_saved(self.qs) or Restored(tuple(files))
        self.state = AppState(
            restored.files if restored else files, restored.module_names if restored else None
        )
        self.gc = GuiGarbageCollector(self)  # cycles freed on this thread, not a worker's
        self.bridge = EngineBridge(engine, frameworks, self)
        # the window's widgets: built and laid out by window_layout, which hands them back
        parts = build_layout(self.state, self.qs, self.bridge.frameworks, self)
        self.setCentralWidget(parts.central)
        self.tree, self.op_filter = parts.tree, parts.op_filter
        self.settings_panel, self.settings_scroll = parts.settings_panel, parts.settings_scroll
        self.field_escape = parts.field_escape
        self.grid, self.grid_room = parts.grid, parts.grid_room
        self.flow_view, self.flow_split = parts.flow_view, parts.flow_split
        self.pair_label, self.run_picker = parts.pair_label, parts.run_picker
        self.tabs = parts.tabs
        self.numbers, self.worst, self.pair_numbers = parts.numbers, parts.worst, parts.pair_numbers
        self.diagnostics, self.checks_matrix = parts.diagnostics, parts.checks_matrix
        self.log = parts.log
        # its actions and menus (window_menus)
        menus = build_menus(self, self.qs, self.grid)
        self.act_open, self.act_open_module = menus.act_open, menus.act_open_module
        self.act_reload, self.act_screenshot = menus.act_reload, menus.act_screenshot
        self.act_quit, self.act_traps = menus.act_quit, menus.act_traps
        self.act_find = menus.act_find
        self.act_run, self.act_run_one = menus.act_run, menus.act_run_one
        self.act_skip, self.act_cancel = menus.act_skip, menus.act_cancel
        self.act_watch, self.act_reset_settings = menus.act_watch, menus.act_reset_settings
        self.act_log_scale = menus.act_log_scale
        self.recent_menu, self.export_menu = menus.recent_menu, menus.export_menu
        self.view_menu = menus.view_menu
        self._build()
        self._connect()
        self.runs.settings_changed()
        self.tree.refresh()
        self.resize(1500, 950)
        geo = self.qs.value(Key.GEOMETRY)
        bad = list(getattr(self.qs, "fallbacks", [])) + list(self.settings_panel.fallbacks)
        if geo is not None and not self.restoreGeometry(QByteArray(bytes(geo))):
            bad.append(f"{Key.GEOMETRY}={_short_repr(geo)}")
        if bad:  # said once, where the user looks first
            self.note("settings", "unusable saved settings, defaults used: " + ", ".join(bad))
        from gradviz.engine.memory import memory_setting_problem

        if memory_setting_problem():
            self.note(
                "settings",
                memory_setting_problem()
                + "; each worker may use half this machine's memory instead",
            )
        if restored is not None:
            from gradviz.qt.remembered_files import RememberedFiles

            self.remembered = RememberedFiles(
                self.qs,
                self.state,
                restored,
                diagnostics=self.diagnostics,
                log=self.log,
                summary=self.summary,
                tabs=self.tabs,
            )

    # --- layout and wiring ----------------------------------------------------------------------
    def _build(self) -> None:
        """The window's controllers over its widgets, and its status bar."""
        self.recent = RecentFiles(self.qs, self.recent_menu, self.open_files)
        self.exports = WindowExports(self, self.grid, self.state, self.flow_view)
        hook_exports(self.exports, self.export_menu, self.grid)
        self.workers = WorkerLabels(self.statusBar(), self.bridge.frameworks)
        self.summary = QLabel("")
        self.statusBar().addWidget(self.summary, 1)
        self.pair_view = PairView(
            self.state,
            self.tree,
            self.grid,
            self.numbers,
            self.pair_numbers,
            self.pair_label,
            self.flow_view,
            self.diagnostics,
            self.run_picker,
            parent=self,
        )
        # its progress bar after the worker labels
        self.runs = RunControl(
            self.state,
            self.bridge,
            self.settings_panel,
            self.summary,
            self.statusBar(),
            tree=self.tree,
            diagnostics=self.diagnostics,
            checks_matrix=self.checks_matrix,
            log=self.log,
            tabs=self.tabs,
            pair_view=self.pair_view,
            act_run=self.act_run,
            act_cancel=self.act_cancel,
            act_skip=self.act_skip,
            on_done=self.runDone.emit,
        )
        self.files = FileControl(
            self.state,
            self.bridge,
            self.qs,
            self.recent,
            self,
            summary=self.summary,
            log=self.log,
            diagnostics=self.diagnostics,
            tabs=self.tabs,
            tree=self.tree,
            op_filter=self.op_filter,
            pair_view=self.pair_view,
            runs=self.runs,
            act_watch=self.act_watch,
            note=self.note,
            on_loaded=self.catalogsLoaded.emit,
            on_done=self.runDone.emit,
        )
        self.watcher = self.files.watcher
        from gradviz.qt.worst_tensors import WorstTensors

        self.worst_tensors = WorstTensors(
            self.state, self.worst, self.tree, self.grid, self.pair_view, parent=self
        )
        # the parts that paint colours of their own, repainted when the scheme changes
        self.restyled = (
            self.tree,
            self.settings_panel,
            self.grid,
            self.flow_view,
            self.pair_label,
            self.numbers,
            self.diagnostics,
            self.checks_matrix,
            self.workers,
        )
        # last: the scheme repaints the parts built above
        self.theme_choice, self.theme_actions = build_theme_menu(self, self.view_menu, self.qs)
        follow_desktop(self.set_color_scheme)
        self.setAcceptDrops(True)

    def _connect(self) -> None:
        b, s = self.bridge, self.state
        b.workerState.connect(self._worker_state)
        b.devicesReady.connect(self.settings_panel.set_devices)
        b.opStarted.connect(s.op_started)
        b.resultReady.connect(s.arrived)  # analysed off the GUI thread, delivered once
        b.checksReady.connect(s.checks_arrived)
        b.workerOutput.connect(lambda fw, line: self.log.note(f"[{fw} worker] {line}"))
        b.failed.connect(
            lambda msg: self.diagnostics.add(
                "error", "gradviz", "internal error: " + msg.splitlines()[0], detail=msg
            )
        )
        self.files.connect()
        s.subscribe("progress", self.tree.show_progress)  # before the runs' own progress call
        self.runs.connect()
        s.subscribe("stale", self.tree.show_marks)
        self.pair_view.connect()
        self.worst_tensors.connect()
        for table in (self.numbers, self.worst):
            table.copied.connect(
                lambda n: self.statusBar().showMessage(
                    f"copied {n} row{'s' if n != 1 else ''} (tab-separated, with headers)", 3000
                )
            )
        self.tree.runRequested.connect(lambda keys: self.run(keys))
        # once the rows are drawn: the grid gets two whole rows when the flow chart appears
        self.flow_view.appeared.connect(lambda: QTimer.singleShot(0, self.grid_room.fit))
        self.op_filter.textChanged.connect(self.tree.set_filter)
        self.diagnostics.copied.connect(lambda t: self.statusBar().showMessage(f"copied {t}", 3000))
        self.diagnostics.countChanged.connect(
            lambda n: self._tab_count(self.diagnostics, "Diagnostics", n)
        )
        self.checks_matrix.failuresChanged.connect(
            lambda n: self._tab_count(self.checks_matrix, "Checks", n, " failed")
        )

    def _tab_count(self, widget, title: str, n: int, what: str = "") -> None:
        self.tabs.setTabText(self.tabs.indexOf(widget), f"{title} ({n}{what})" if n else title)

    def note(self, source: str, text: str) -> None:
        """Say `text` in the status bar and in the log."""
        self.summary.setText(text)
        self.log.add(source, text)

    def _worker_state(self, st) -> None:
        if self.workers.show(st):
            name = FRAMEWORK_LABELS.get(st.framework, st.framework)
            self.diagnostics.clear_for(f"worker:{st.framework}")
            self.diagnostics.add(
                "error",
                name,
                f"{name} could not be loaded: {st.detail}",
                key=f"worker:{st.framework}",
            )

    # --- commands (menus, tool bar, tree, scripts and tests) -----------------------------------
    def start(self, run: bool = False) -> None:
        """Start the workers (they import their frameworks in their own processes) and load the
        files; with run=True, run every op as soon as they are loaded."""
        self.state.run_when_loaded = run
        self.bridge.start()
        self.bridge.refresh_devices()
        self.files.load(self.state.loaded.files)

    def open_files(self, paths, module_names=None) -> None:
        self.files.open_files(paths, module_names)

    def open_trap_examples(self) -> None:
        from gradviz.catalog import trap_examples

        self.open_files(trap_examples())

    def reload(self) -> None:
        self.files.load(self.state.loaded.files)

    def open_dialog(self) -> None:
        self.files.open_dialog()

    def open_module_dialog(self) -> None:
        self.files.open_module_dialog()

    def remove_file(self, path: str) -> None:
        """Take a file off the list: its ops, results, diagnostics and watch go with it."""
        self.files.remove_file(path)

    def dragEnterEvent(self, ev):
        if self.files.accepts_drag(ev):
            ev.acceptProposedAction()

    def dropEvent(self, ev):
        self.files.drop(ev)

    def run(self, keys=None) -> bool:
        """Run `keys` ((framework, file, qualname)), default the checked ops (window_runs.py)."""
        return self.runs.run(keys)

    def run_current(self) -> None:
        self.runs.run_current()

    def cancel(self) -> None:
        self.runs.cancel()

    def skip(self) -> None:
        """Skip the running op of the shown pair (else every running op)."""
        self.runs.skip()

    def reset_settings(self) -> None:
        self.runs.reset_settings()

    def show_pair(self, pair: str | None) -> None:
        self.pair_view.show(pair)

    def refresh_view(self) -> None:
        self.pair_view.refresh()

    def set_all_views(self, view: str) -> None:
        self.pair_view.set_all_views(view)

    # --- colour scheme (gradviz/qt/window_theme.py) ------------------------------------------
    def set_color_scheme(self, desktop_scheme) -> None:
        """The desktop's scheme (a Qt.ColorScheme) changed, or is first known."""
        self._desktop_scheme = desktop_scheme
        self.plot_scheme = show_scheme(self, self.theme_choice, desktop_scheme, self.restyled)

    def set_theme(self, choice: str) -> None:
        """View > Theme: "follow desktop", "light" or "dark" (saved as view/theme)."""
        self.theme_choice = choice
        self.theme_actions[choice].setChecked(True)
        self.qs.setValue(Key.THEME, choice)
        self.set_color_scheme(self._desktop_scheme)

    # --- misc ----------------------------------------------------------------------------------
    def save_screenshot(self, path: str) -> bool:
        QApplication.processEvents()
        return self.grab().save(path)

    def screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save window image", "gradviz.png", "PNG (*.png)"
        )
        if path and not self.save_screenshot(path):
            QMessageBox.warning(self, "gradviz", f"could not write {path}")

    def about(self) -> None:
        engine = self.bridge.engine
        show_about(self, self.bridge.frameworks, engine.states() if engine is not None else {})

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        QTimer.singleShot(0, self.grid_room.fit)  # after the splitters took the new size

    def closeEvent(self, ev):
        """Save the settings, then stop every thread and worker this window started: a run in
        flight is cancelled, its threads joined."""
        self.qs.setValue(Key.GEOMETRY, bytes(self.saveGeometry().data()))
        self.settings_panel.save()
        self.qs.sync()
        self.bridge.close()
        self.pair_numbers.close()
        self.gc.stop()
        super().closeEvent(ev)
