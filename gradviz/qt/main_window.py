"""The main window: op browser and run settings on the left, the gradient grid in the middle,
numbers / diagnostics / log below, worker states in the status bar.

It is a view: run state lives in gradviz.app.state.AppState (self.state). The window sends it what
the user and the engine did, and renders what it reports; the engine runs in workers behind
EngineBridge. Nothing here computes a gradient or a verdict.
"""
from __future__ import annotations

import os
from typing import Optional

from PySide6.QtCore import QByteArray, QSettings, QTimer, Signal
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
)

from gradviz.app.open_list import Restored
from gradviz.app.results import request_key
from gradviz.app.state import AppState
from gradviz.model import FRAMEWORKS, MODES
from gradviz.plots.flow import build_flow_figure, is_stack
from gradviz.qt.about import app_icon, show_about
from gradviz.qt.checks_matrix import contract_findings
from gradviz.qt.engine_bridge import EngineBridge
from gradviz.qt.file_watcher import FileWatcher
from gradviz.qt.gui_gc import GuiGarbageCollector
from gradviz.qt.theme import FRAMEWORK_LABELS
from gradviz.qt.window_layout import build_layout
from gradviz.qt.window_menus import RecentFiles, build_menus, hook_exports
from gradviz.qt.window_theme import build_theme_menu, show_scheme
from gradviz.qt.worker_status import WorkerLabels


def _short_repr(value, n: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 1] + "…"


class MainWindow(QMainWindow):
    catalogsLoaded = Signal()          # a load finished and the tree shows it
    runDone = Signal(object)           # list[RunResult] of the batch

    def __init__(self, files=(), engine=None, qsettings: Optional[QSettings] = None,
                 frameworks=FRAMEWORKS, parent=None, remember_files: bool = False):
        """With `remember_files`, open the files saved by the last launch (`files` when none
        were saved) and keep the list saved for the next one (qt/remembered_files.py)."""
        super().__init__(parent)
        self.setWindowTitle("gradviz")
        self.setWindowIcon(app_icon())
        self.qs = qsettings or QSettings("gradviz", "gradviz")
        from gradviz.qt.settings_guard import drop_pickled_values
        self._dropped_settings = drop_pickled_values(self.qs)   # before any value is read
        restored = None
        if remember_files:                        # read after the guard: values are plain now
            from gradviz.qt.remembered_files import read_saved
            restored = read_saved(self.qs) or Restored(tuple(files))
        self.state = AppState(restored.files if restored else files,
                              restored.module_names if restored else None)
        self.gc = GuiGarbageCollector(self)       # cycles freed on this thread, not a worker's
        self.bridge = EngineBridge(engine, frameworks, self)
        self._build()
        self._connect()
        self._settings_changed()
        self.tree.refresh()
        self.resize(1500, 950)
        geo = self.qs.value("window/geometry")
        bad = list(self.settings_panel.fallbacks)
        if geo is not None and not (isinstance(geo, (QByteArray, bytes)) and self.restoreGeometry(geo)):
            bad.append(f"window/geometry={_short_repr(geo)}")
        if bad:                                 # said once, where the user looks first
            self._note("settings", "unusable saved settings, defaults used: " + ", ".join(bad))
        if restored is not None:
            from gradviz.qt.remembered_files import RememberedFiles
            self.remembered = RememberedFiles(self, restored)

    # --- layout --------------------------------------------------------------------------------
    def _build(self) -> None:
        build_layout(self)
        build_menus(self)
        self.recent = RecentFiles(self.qs, self.recent_menu, self.open_files)
        hook_exports(self)
        sb = self.statusBar()
        self.workers = WorkerLabels(sb, self.bridge.frameworks)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        sb.addPermanentWidget(self.progress)
        self.summary = QLabel("")
        sb.addWidget(self.summary, 1)
        build_theme_menu(self)                  # last: it repaints the parts built above
        if self._dropped_settings:
            self._note("settings", "settings: ignored " + ", ".join(self._dropped_settings) +
                       ": not a plain value (a pickled object is never read); defaults used")
        self.setAcceptDrops(True)

    def _connect(self) -> None:
        b, s = self.bridge, self.state
        b.workerState.connect(self._worker_state)
        b.catalogsReady.connect(self._catalogs)
        b.devicesReady.connect(self.settings_panel.set_devices)
        b.opStarted.connect(s.op_started)
        b.resultReady.connect(s.arrived)      # analysed off the GUI thread, delivered once
        b.checksReady.connect(s.checks_arrived)
        b.runFinished.connect(self._run_finished)
        b.busyChanged.connect(self._busy)
        b.workerOutput.connect(lambda fw, line: self.log.note(f"[{fw} worker] {line}"))
        b.failed.connect(lambda msg: self.diagnostics.add(
            "error", "gradviz", "internal error: " + msg.splitlines()[0], detail=msg))
        s.subscribe("files", self._files_shown)
        s.subscribe("progress", self.tree.show_progress)
        s.subscribe("progress", self._progress)
        s.subscribe("result", self._show_result)
        s.subscribe("checks", self._show_checks)
        self.tree.pairSelected.connect(self.show_pair)
        self.tree.runRequested.connect(lambda keys: self.run(keys))
        self.tree.removeRequested.connect(self.remove_file)
        self.op_filter.textChanged.connect(self.tree.set_filter)
        self.settings_panel.changed.connect(self._settings_changed)
        s.subscribe("stale", self.tree.show_marks)
        self.grid.tensorClicked.connect(self._tensor_clicked)
        self.numbers.tensorSelected.connect(self.grid.highlight)
        self.diagnostics.problemSelected.connect(self._problem_selected)
        self.diagnostics.copied.connect(lambda t: self.statusBar().showMessage(f"copied {t}", 3000))
        self.diagnostics.countChanged.connect(lambda n: self._tab_count(self.diagnostics, "Diagnostics", n))
        self.checks_matrix.failuresChanged.connect(
            lambda n: self._tab_count(self.checks_matrix, "Checks", n, " failed"))
        self.watcher = FileWatcher(parent=self)
        self.watcher.enabled = self.act_watch.isChecked()
        self.watcher.filesChanged.connect(self._files_changed)
        self.act_watch.toggled.connect(self._watch_toggled)
        self._grid_timer = QTimer(self)
        self._grid_timer.setSingleShot(True)
        self._grid_timer.setInterval(30)
        self._grid_timer.timeout.connect(self.refresh_view)

    def _tab_count(self, widget, title: str, n: int, what: str = "") -> None:
        self.tabs.setTabText(self.tabs.indexOf(widget), f"{title} ({n}{what})" if n else title)

    def _note(self, source: str, text: str) -> None:
        self.summary.setText(text)
        self.log.add(source, text)

    # --- start and files -----------------------------------------------------------------------
    def start(self, run: bool = False) -> None:
        """Start the workers (they import their frameworks in their own processes) and load the
        files; with run=True, run every op as soon as they are loaded."""
        self.state.run_when_loaded = run
        self.bridge.start()
        self.bridge.refresh_devices()
        self._load(self.state.loaded.files)

    def _load(self, files) -> None:
        if not files:
            if self.state.run_when_loaded:
                QTimer.singleShot(0, lambda: self._catalogs([], ()))
            return
        self.state.loading_started()
        self.summary.setText(f"loading {len(files)} file(s)…")
        self.bridge.load(files)

    def open_files(self, paths, module_names=None) -> None:
        for p in paths:
            self.recent.add(os.path.abspath(p))
        new = self.state.open(paths, module_names)
        if new:
            self._load(new)

    def open_trap_examples(self) -> None:
        from gradviz.catalog import trap_examples
        self.open_files(trap_examples())

    def reload(self) -> None:
        self._load(self.state.loaded.files)

    def open_dialog(self) -> None:
        start = self.qs.value("files/last_dir", os.getcwd())
        paths, _ = QFileDialog.getOpenFileNames(self, "Open op files", start, "Python files (*.py)")
        if paths:
            self.qs.setValue("files/last_dir", os.path.dirname(paths[0]))
            self.open_files(paths)

    def open_module_dialog(self) -> None:
        from gradviz.qt.open_module import ask_module_file
        path, name = ask_module_file(self, str(self.qs.value("files/last_module", "")))
        if path:
            self.qs.setValue("files/last_module", name)
            self.open_files([path], {path: name})

    def _catalogs(self, catalogs, files) -> None:
        self.watcher.watch(files)
        if self.diagnostics.show_load(catalogs, files):
            self.tabs.setCurrentWidget(self.diagnostics)
        keys, first = self.state.catalogs_arrived(catalogs, files)
        loaded = self.state.loaded
        self.summary.setText(f"{len(loaded.files)} file(s), {len(loaded.ops)} op(s)")
        self.catalogsLoaded.emit()
        if keys is not None and not self.run(keys) and first:
            self.runDone.emit([])
        self.show_pair(self.tree.current_pair())

    def remove_file(self, path: str) -> None:
        """Take a file off the list: its ops, results, diagnostics and watch go with it."""
        self.state.remove_file(path)
        self.watcher.unwatch(path)
        self.diagnostics.clear_file(os.path.abspath(path))
        self.summary.setText(f"removed {os.path.basename(path)}")
        self.refresh_view()

    def _files_shown(self) -> None:
        self.tree.refresh()

    def _files_changed(self, files) -> None:
        self.log.note(f"changed: {', '.join(os.path.basename(f) for f in files)} — reloading and re-running")
        self.state.files_changed(files)
        self._load(files)

    def _watch_toggled(self, on: bool) -> None:
        self.qs.setValue("run/watch", "true" if on else "false")
        self.watcher.enabled = on

    def dragEnterEvent(self, ev):
        if any(u.isLocalFile() and (u.toLocalFile().endswith(".py") or os.path.isdir(u.toLocalFile()))
               for u in ev.mimeData().urls()):
            ev.acceptProposedAction()

    def dropEvent(self, ev):
        """Dropped .py files, and the .py files of dropped folders (app.op_files)."""
        from gradviz.app.op_files import op_files
        paths, note = op_files(u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile())
        if note:
            self._note("open", note)
        if paths:
            self.open_files(paths)
            ev.acceptProposedAction()

    # --- runs ----------------------------------------------------------------------------------
    def run(self, keys=None) -> bool:
        """Run `keys` ((framework, file, qualname)), default the checked ops. A run asked for while
        one is going on starts when it ends (the latest ask wins)."""
        problem = self.settings_panel.validate()
        if problem:
            self.summary.setText(f"cannot run: {problem}")
            return False
        keys = list(keys) if keys is not None else self.state.loaded.checked_keys()
        if not keys:
            self.summary.setText("nothing to run: load a file and check some ops")
            return False
        if self.bridge.running:
            self.state.defer(keys)
            return True
        reqs = self.state.requests(keys, self.settings_panel.settings)
        if not self.bridge.run(reqs):
            return False
        for k in keys:
            self.diagnostics.clear_for(f"run:{k}")
        self.state.run_started(reqs)
        self.progress.setRange(0, len(reqs))
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m runs")
        self.progress.show()
        self.summary.setText(f"running {len(reqs)} op run(s)…")
        if reqs[0].settings.checks:
            self.checks_matrix.set_pending(
                [(k, f"{self.state.loaded.pair_name(k)} ({k[0]})") for k in self.state.progress.keys],
                reqs[0].settings.checks)
        return True

    def run_current(self) -> None:
        pair = self.tree.current_pair()
        if pair:
            self.run(self.state.loaded.keys_of(pair))

    def cancel(self) -> None:
        self.state.cancel()
        self.bridge.cancel()
        self.summary.setText("cancelling…")

    def skip(self) -> None:
        """Skip the running op of the shown pair (else every running op): its worker is
        replaced, the rest of the queue goes on."""
        keys = self.state.in_flight(self.tree.current_pair()) or self.state.in_flight()
        if not keys:
            self.summary.setText("nothing running to skip")
            return
        self.bridge.skip(keys)
        self.summary.setText("skipping " + ", ".join(f"{k[2]} ({k[0]})" for k in keys) + "…")

    def _settings_changed(self) -> None:
        """Tell the model what a run would use now: results made otherwise are marked stale."""
        now = {}
        for fw in self.bridge.frameworks:
            try:
                now[fw] = self.settings_panel.settings(fw)
            except ValueError:
                pass                            # not parseable yet: nothing to compare with
        self.state.settings_changed(now)

    def reset_settings(self) -> None:
        self.settings_panel.reset_to_defaults()
        self.summary.setText("run settings reset to their defaults")

    def _busy(self, busy: bool) -> None:
        self.act_run.setEnabled(not busy)
        self.act_cancel.setEnabled(busy)
        self.act_skip.setEnabled(busy)

    def _show_result(self, key, analysis) -> None:
        res = analysis.result
        self.diagnostics.show_result(key, analysis)
        if not res.partial:
            self.progress.setValue(self.state.progress.done)
            self.log.add(f"{res.name} ({res.framework}) on {res.device or res.request.settings.device}",
                         res.log)
        self._schedule_grid(key)

    def _schedule_grid(self, key) -> None:
        """One redraw for results arriving close together; the batch end redraws anyway. When
        every framework of the shown pair has a result of this batch at the same stage (both
        partial, or both final), draw at once; else give the other the 30 ms debounce."""
        shown = self.tree.current_pair()
        pair = self.state.loaded.pair_name(key)
        if shown is not None and pair != shown:
            return
        if shown is not None and self.state.pair_in_step(pair):
            self.refresh_view()
        else:
            self._grid_timer.start()

    def _progress(self, key) -> None:
        """An op of the shown pair started or ended with nothing drawn yet: say so in the grid."""
        pair = self.tree.current_pair()
        if pair is not None and self.state.loaded.pair_name(key) == pair and \
                not self.state.pair_analyses(pair):
            self.show_pair(pair)

    def _show_checks(self, key, res) -> None:
        """An op's contract checks, after every plain result of the batch is in."""
        label = f"{res.name} ({res.framework})"
        self.checks_matrix.set_checks(key, label, res.checks)
        for f in contract_findings(res):
            self.diagnostics.add_finding(label, f, key=f"run:{key}", run_key=key)
        self.summary.setText(f"contract checks: {label} done")

    def _run_finished(self, results) -> None:
        self.progress.hide()
        pending = self.state.run_finished(results)
        self.summary.setText(self.state.summary(results))
        shown = self.tree.current_pair()
        loaded = self.state.loaded
        if any(r.status != "ok" and loaded.pair_name(request_key(r.request)) == shown
               for r in results):
            self.tabs.setCurrentWidget(self.diagnostics)
        if shown is None and results:
            self.tree.select_pair(loaded.pair_name(request_key(results[0].request)))
        self.refresh_view()
        self.runDone.emit(list(results))
        if pending is not None:
            self.run(pending)

    # --- view ----------------------------------------------------------------------------------
    def show_pair(self, pair: Optional[str]) -> None:
        self._grid_timer.stop()
        self.diagnostics.set_selected_op(self.state.loaded.keys_of(pair) if pair else ())
        if not pair:
            if self.state.loading:
                self.grid.show_message("loading op files… (frameworks start in their own processes)")
            elif not self.state.loaded.files:
                self.grid.show_message("No op files. Open one with File ▸ Open or drop .py files here.")
            else:
                self.grid.show_message("No ops found in the loaded files (see Diagnostics).")
            self.pair_numbers.clear()
            self.pair_label.show_pair(None)
            self.flow_view.set_figure(None)
            return
        analyses = self.state.pair_analyses(pair)
        results = {fw: a.result for fw, a in analyses.items()}
        comps = {fw: a.comparison for fw, a in analyses.items()}
        series = {fw: a.series for fw, a in analyses.items()}
        modes = next((r.request.settings.modes for r in results.values()), MODES)
        self.pair_label.show_pair(pair)
        self.flow_view.set_figure(build_flow_figure(list(results.values()), pair)
                                  if is_stack(list(results.values())) else None)
        drawn = self.grid.set_data(pair, results, modes, comps, series=series)
        states = {self.state.progress.states.get(k) for k in self.state.loaded.keys_of(pair)}
        if not results and states & {"queued", "running"}:   # not "not run yet": it is on its way
            self.grid.show_message(f"{pair}: " + ("running… (elapsed and timeout above)"
                                                  if "running" in states else "queued…"))
        if drawn:                               # else the same results as shown: nothing to redo
            self.pair_numbers.show(pair, tuple(results.values()), comps, modes)

    def refresh_view(self) -> None:
        self.show_pair(self.tree.current_pair())

    # --- colour scheme (gradviz/qt/window_theme.py) ------------------------------------------
    def set_color_scheme(self, desktop_scheme) -> None:
        """The desktop's scheme (a Qt.ColorScheme) changed, or is first known."""
        self._desktop_scheme = desktop_scheme
        self.plot_scheme = show_scheme(self, desktop_scheme)

    def set_theme(self, choice: str) -> None:
        """View > Theme: "follow desktop", "light" or "dark" (saved as view/theme)."""
        self.theme_choice = choice
        self.theme_actions[choice].setChecked(True)
        self.qs.setValue("view/theme", choice)
        self.set_color_scheme(self._desktop_scheme)

    def set_all_views(self, view: str) -> None:
        for name, row in self.grid.rows.items():
            if row.view_box.findData(view) >= 0:
                self.grid.set_view(name, view)

    def _problem_selected(self, p) -> None:
        """A diagnostic clicked: show its op, and its tensor when it names one."""
        if p.key and p.key in self.state.loaded.ops:
            self.tree.select_pair(self.state.loaded.pair_name(p.key))
        if p.tensor and p.tensor in self.grid.rows:
            self._tensor_clicked(p.tensor)

    def _tensor_clicked(self, name: str) -> None:
        self.grid.highlight(name)
        self.numbers.select(name)

    def _worker_state(self, st) -> None:
        if self.workers.show(st):
            name = FRAMEWORK_LABELS.get(st.framework, st.framework)
            self.diagnostics.clear_for(f"worker:{st.framework}")
            self.diagnostics.add("error", name, f"{name} could not be loaded: {st.detail}",
                                 key=f"worker:{st.framework}")

    # --- misc ----------------------------------------------------------------------------------
    def save_screenshot(self, path: str) -> bool:
        QApplication.processEvents()
        return self.grab().save(path)

    def screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save window image", "gradviz.png", "PNG (*.png)")
        if path and not self.save_screenshot(path):
            QMessageBox.warning(self, "gradviz", f"could not write {path}")

    def about(self) -> None:
        engine = self.bridge.engine
        show_about(self, self.bridge.frameworks, engine.states() if engine is not None else {})

    def closeEvent(self, ev):
        """Save the settings, then stop every thread and worker this window started: a run in
        flight is cancelled, its threads joined."""
        self.qs.setValue("window/geometry", self.saveGeometry())
        self.settings_panel.save()
        self.qs.sync()
        self.bridge.close()
        self.pair_numbers.close()
        self.gc.stop()
        super().closeEvent(ev)
