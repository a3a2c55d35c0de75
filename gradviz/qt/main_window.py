"""The main window: op browser and run settings on the left, the gradient grid in the middle,
numbers / diagnostics / log below, worker states in the status bar.

It only wires parts together: the engine runs in workers (EngineBridge), verdicts come from
gradviz.compare, plot data from gradviz.plots. Nothing here computes a gradient.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Optional

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QApplication, QFileDialog, QLabel, QMainWindow, QMessageBox,
                               QProgressBar, QSplitter, QTabWidget, QToolBar, QVBoxLayout, QWidget)

from gradviz.diagnostics import diagnose_load
from gradviz.model import FRAMEWORKS, MODES, RunRequest, RunResult
from gradviz.qt.about import app_icon, show_about
from gradviz.qt.checks_matrix import ChecksMatrix, contract_findings
from gradviz.qt.diagnostics_panel import DiagnosticsPanel
from gradviz.qt.engine_bridge import EngineBridge
from gradviz.plots.flow import build_flow_figure, is_stack
from gradviz.qt.file_watcher import FileWatcher
from gradviz.qt.flow_view import FlowView
from gradviz.qt.grid_view import GridView
from gradviz.qt.log_panel import LogPanel
from gradviz.qt.numbers_table import NumbersTable
from gradviz.qt.op_tree import OpTree
from gradviz.qt.parity_worker import ParityWorker
from gradviz.qt.settings_panel import SettingsPanel
from gradviz.qt.theme import FRAMEWORK_LABELS, STATE_COLORS

RECENT_MAX = 10
PARTIAL, FINAL = 1, 2          # how far a result of the running batch got (0: not yet)


def _short_repr(value, n: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 1] + "…"


def _key(req: RunRequest) -> tuple:
    return (req.framework, os.path.abspath(req.file), req.qualname)


class MainWindow(QMainWindow):
    catalogsLoaded = Signal()          # a discovery finished and the tree shows it
    runDone = Signal(object)           # list[RunResult] of the batch

    def __init__(self, files=(), engine=None, qsettings: Optional[QSettings] = None,
                 frameworks=FRAMEWORKS, parent=None):
        super().__init__(parent)
        self.setWindowTitle("gradviz")
        self.setWindowIcon(app_icon())
        self.qs = qsettings or QSettings("gradviz", "gradviz")
        from gradviz.qt.settings_guard import drop_pickled_values
        self._dropped_settings = drop_pickled_values(self.qs)   # before any value is read
        self.files = [os.path.abspath(f) for f in files]
        self.results: dict[tuple, RunResult] = {}
        self.comparisons: dict[tuple, object] = {}
        self.series: dict[tuple, dict] = {}      # key -> prepared values curves of its result
        self._requested: dict[tuple, RunRequest] = {}   # key -> the request as asked for
        self.parity_worker = ParityWorker(parent=self)
        self.parity_worker.ready.connect(self._parity_ready)
        # key -> PARTIAL/FINAL: results of the running batch sent by the engine (being prepared)
        # and prepared (ready to draw); a pair is drawn once all its sent results are prepared
        self._batch_keys: list = []
        self._arrived: dict[tuple, int] = {}
        self._drawable: dict[tuple, int] = {}
        self._numbers_args: Optional[tuple] = None    # (pair, results, comps, modes) in the table
        self.last_batch: list[RunResult] = []
        self._run_when_loaded = False
        self._pending_keys: Optional[list] = None
        self._rerun_files: set[str] = set()
        self._loading = 0
        self.bridge = EngineBridge(engine, frameworks, self)
        self._build()
        self._connect()
        self.tree.set_catalogs([], tuple(self.files))
        self.resize(1500, 950)
        geo = self.qs.value("window/geometry")
        bad = list(self.settings_panel.fallbacks)
        if geo is not None and not (isinstance(geo, (QByteArray, bytes)) and self.restoreGeometry(geo)):
            bad.append(f"window/geometry={_short_repr(geo)}")
        if bad:                                 # said once, where the user looks first
            note = "unusable saved settings, defaults used: " + ", ".join(bad)
            self.summary.setText(note)
            self.log.add("settings", note)

    # --- layout --------------------------------------------------------------------------------
    def _build(self) -> None:
        self.tree = OpTree()
        self.settings_panel = SettingsPanel(self.qs, self.bridge.frameworks)
        left = QSplitter(Qt.Vertical)
        left.addWidget(self.tree)
        left.addWidget(self.settings_panel)
        left.setSizes([520, 380])
        self.grid = GridView()
        self.numbers = NumbersTable()
        self.diagnostics = DiagnosticsPanel()
        self.log = LogPanel()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.numbers, "Numbers")
        self.tabs.addTab(self.diagnostics, "Diagnostics")
        self.checks_matrix = ChecksMatrix()
        self.tabs.addTab(self.checks_matrix, "Checks")
        self.tabs.addTab(self.log, "Log")
        self.pair_label = QLabel("")
        self.pair_label.setStyleSheet("font-size: 14px; padding: 2px 4px")
        self.pair_label.setTextFormat(Qt.RichText)
        center = QWidget()
        cl = QVBoxLayout(center)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.pair_label)
        # a stack run shows its flow chart above the per-tensor grid
        self.flow_view = FlowView()
        self.flow_view.hide()
        self.flow_split = QSplitter(Qt.Vertical)
        self.flow_split.addWidget(self.flow_view)
        self.flow_split.addWidget(self.grid)
        self.flow_split.setStretchFactor(1, 1)
        self.flow_split.setSizes([330, 400])
        cl.addWidget(self.flow_split, 1)
        middle = QSplitter(Qt.Vertical)
        middle.addWidget(center)
        middle.addWidget(self.tabs)
        middle.setSizes([640, 260])
        main = QSplitter(Qt.Horizontal)
        main.addWidget(left)
        main.addWidget(middle)
        main.setSizes([380, 1120])
        main.setStretchFactor(1, 1)
        self.setCentralWidget(main)
        self._build_actions()
        self._build_status()
        if self._dropped_settings:
            note = ("ignored " + ", ".join(self._dropped_settings) +
                    ": not a plain value (a pickled object is never read); defaults used")
            self.summary.setText("settings: " + note)
            self.log.add("settings", note)
        self.setAcceptDrops(True)

    def _build_actions(self) -> None:
        self.act_open = QAction("&Open op files…", self, shortcut=QKeySequence.Open, triggered=self.open_dialog)
        self.act_open_module = QAction("Open &module…", self, triggered=self.open_module_dialog)
        self.act_open_module.setToolTip("open a module by its dotted name, e.g. mypkg.quant_ops")
        self.act_reload = QAction("Re&load files", self, shortcut=QKeySequence("F5"), triggered=self.reload)
        self.act_run = QAction("▶ Run", self, shortcut=QKeySequence("Ctrl+R"), triggered=lambda: self.run())
        self.act_run.setToolTip("run the checked ops in every framework (Ctrl+R)")
        self.act_run_one = QAction("Run selected op", self, shortcut=QKeySequence("Ctrl+Shift+R"),
                                   triggered=self.run_current)
        self.act_cancel = QAction("■ Cancel", self, shortcut=QKeySequence("Esc"), triggered=self.cancel)
        self.act_cancel.setEnabled(False)
        self.act_watch = QAction("Watch files and re-run", self, checkable=True)
        self.act_watch.setChecked(str(self.qs.value("run/watch", "true")).lower() == "true")
        self.act_watch.toggled.connect(self._watch_toggled)
        self.act_screenshot = QAction("Save window image…", self, triggered=self._screenshot_dialog)
        self.act_quit = QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close)
        menu = self.menuBar()
        fm = menu.addMenu("&File")
        fm.addAction(self.act_open)
        fm.addAction(self.act_open_module)
        self.recent_menu = fm.addMenu("Open &recent")
        fm.addAction(self.act_reload)
        fm.addSeparator()
        self.export_menu = fm.addMenu("&Export")
        self._hook_exports()
        fm.addAction(self.act_screenshot)
        fm.addSeparator()
        fm.addAction(self.act_quit)
        rm = menu.addMenu("&Run")
        for a in (self.act_run, self.act_run_one, self.act_cancel):
            rm.addAction(a)
        rm.addSeparator()
        rm.addAction(self.act_watch)
        self.view_menu = menu.addMenu("&View")
        for view, label in (("values", "Values by index"), ("histogram", "Histograms"),
                            ("scatter", "Custom vs default"), ("vs_input", "Gradient vs input")):
            self.view_menu.addAction(f"All rows: {label}", lambda v=view: self.set_all_views(v))
        hm = menu.addMenu("&Help")
        self.act_traps = hm.addAction("Open trap examples", self.open_trap_examples)
        self.act_traps.setToolTip("ops that go wrong on purpose: every diagnostic gradviz gives")
        hm.addSeparator()
        hm.addAction("About gradviz", self._about)
        tb = QToolBar("Run")
        tb.setObjectName("runToolbar")
        tb.setMovable(False)
        for a in (self.act_open, self.act_run, self.act_cancel):
            tb.addAction(a)
        tb.addSeparator()
        tb.addAction(self.act_watch)
        self.addToolBar(tb)
        self._refresh_recent()

    def _hook_exports(self) -> None:
        """Export actions come from export_actions.py (another module's job); absent: disabled."""
        try:
            from gradviz.qt import export_actions
        except ImportError:
            self.export_menu.setEnabled(False)
            self.export_menu.setToolTip("exporters not available")
            return
        hook = getattr(export_actions, "install", None) or getattr(export_actions, "add_export_actions", None)
        if hook is None:
            self.export_menu.setEnabled(False)
            return
        try:
            hook(self, self.export_menu)
            plot_hook = getattr(export_actions, "add_plot_actions", None)
            if plot_hook is not None:
                self.grid.plot_menu_hook = lambda menu, tensor, fw, mode: plot_hook(menu, self, tensor, fw, mode)
        except Exception as exc:  # noqa: BLE001 - the window must come up without exporters
            self.export_menu.setEnabled(False)
            self.export_menu.setToolTip(f"exporters failed to load: {exc}")

    def _build_status(self) -> None:
        sb = self.statusBar()
        self.worker_labels: dict[str, QLabel] = {}
        for fw in self.bridge.frameworks:
            lab = QLabel(f"{FRAMEWORK_LABELS.get(fw, fw)}: waiting")
            lab.setStyleSheet("padding: 0 8px; color: #666")
            self.worker_labels[fw] = lab
            sb.addPermanentWidget(lab)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        sb.addPermanentWidget(self.progress)
        self.summary = QLabel("")
        sb.addWidget(self.summary, 1)

    def _connect(self) -> None:
        b = self.bridge
        b.workerState.connect(self._worker_state)
        b.catalogsReady.connect(self._catalogs)
        b.devicesReady.connect(self.settings_panel.set_devices)
        b.runStarted.connect(self._run_started)
        # verdicts and curves arrive computed off the GUI thread (gradviz.plots.prepared)
        b.resultPrepared.connect(self._result)
        b.partialPrepared.connect(self._partial)
        b.partialReady.connect(lambda res: self._arrived_raw(res, PARTIAL))
        b.resultReady.connect(lambda res: self._arrived_raw(res, FINAL))
        b.runFinished.connect(self._run_finished)
        b.checksReady.connect(self._checks_ready)
        self.checks_matrix.failuresChanged.connect(
            lambda n: self.tabs.setTabText(self.tabs.indexOf(self.checks_matrix),
                                           f"Checks ({n} failed)" if n else "Checks"))
        b.busyChanged.connect(self._busy)
        b.workerOutput.connect(self._worker_output)
        b.failed.connect(lambda msg: self.diagnostics.add("error", "gradviz", "internal error: " + msg.splitlines()[0],
                                                          detail=msg))
        self.tree.pairSelected.connect(self.show_pair)
        self.tree.runRequested.connect(lambda keys: self.run(keys))
        self.grid.tensorClicked.connect(self._tensor_clicked)
        self.numbers.tensorSelected.connect(self.grid.highlight)
        self.diagnostics.copied.connect(lambda t: self.statusBar().showMessage(f"copied {t}", 3000))
        self.diagnostics.countChanged.connect(
            lambda n: self.tabs.setTabText(self.tabs.indexOf(self.diagnostics), f"Diagnostics ({n})" if n else "Diagnostics"))
        self.watcher = FileWatcher(parent=self)
        self.watcher.enabled = self.act_watch.isChecked()
        self.watcher.filesChanged.connect(self._files_changed)
        self._grid_timer = QTimer(self)
        self._grid_timer.setSingleShot(True)
        self._grid_timer.setInterval(30)
        self._grid_timer.timeout.connect(self.refresh_view)

    def _worker_output(self, framework: str, line: str) -> None:
        self.log.note(f"[{framework} worker] {line}")

    # --- start and files -----------------------------------------------------------------------
    def start(self, run: bool = False) -> None:
        """Start the workers (they import their frameworks in their own processes) and load the
        files; with run=True, run every op as soon as they are loaded."""
        self._run_when_loaded = run
        self.bridge.start()
        self.bridge.refresh_devices()
        self._discover(self.files)

    def _discover(self, files) -> None:
        files = [os.path.abspath(f) for f in files]
        if not files:
            if self._run_when_loaded:
                QTimer.singleShot(0, lambda: self._catalogs([], ()))
            return
        self._loading += 1
        self.summary.setText(f"loading {len(files)} file(s)…")
        self.bridge.discover(files)

    def open_files(self, paths) -> None:
        new = [os.path.abspath(p) for p in paths if os.path.abspath(p) not in self.files]
        for p in paths:
            self._add_recent(os.path.abspath(p))
        if not new:
            return
        self.files.extend(new)
        self.tree.set_catalogs([], tuple(new))
        self._discover(new)

    def open_trap_examples(self) -> None:
        from gradviz.catalog import trap_examples
        self.open_files(trap_examples())

    def reload(self) -> None:
        self._discover(self.files)

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
            self.open_files([path])

    def _catalogs(self, catalogs, files) -> None:
        self._loading = max(0, self._loading - 1)
        self.tree.set_catalogs(catalogs, tuple(files))
        self.watcher.watch(files)
        for f in files:
            self.diagnostics.clear_for(f"load:{f}")
        for cat in catalogs:
            if cat.error is not None:
                name = os.path.basename(cat.file) + (f" ({cat.framework})" if cat.framework else "")
                self.diagnostics.add_error(name, cat.error, key=f"load:{cat.file}")
                for f in diagnose_load(cat.error, cat.file, cat.framework):
                    self.diagnostics.add_finding(name, f.as_dict(), key=f"load:{cat.file}")
                self.tabs.setCurrentWidget(self.diagnostics)
        n_ops = len(self.tree.ops)
        self.summary.setText(f"{len(self.tree.files)} file(s), {n_ops} op(s)")
        self.catalogsLoaded.emit()
        rerun = [k for k in self.tree.checked_keys() if k[1] in self._rerun_files]
        self._rerun_files -= set(files)
        if self._run_when_loaded and self._loading == 0:
            self._run_when_loaded = False
            if not self.run():
                self.runDone.emit([])
        elif rerun:
            self.run(rerun)
        self.show_pair(self.tree.current_pair())

    def _files_changed(self, files) -> None:
        self.log.note(f"changed: {', '.join(os.path.basename(f) for f in files)} — reloading and re-running")
        self._rerun_files.update(files)
        self._discover(files)

    def _watch_toggled(self, on: bool) -> None:
        self.qs.setValue("run/watch", "true" if on else "false")
        self.watcher.enabled = on

    def _add_recent(self, path: str) -> None:
        recent = [p for p in self._recent() if p != path]
        self.qs.setValue("files/recent", [path] + recent[: RECENT_MAX - 1])
        self._refresh_recent()

    def _recent(self) -> list[str]:
        v = self.qs.value("files/recent", [])
        return [v] if isinstance(v, str) else list(v or [])

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        recent = self._recent()
        for p in recent:
            self.recent_menu.addAction(p, lambda p=p: self.open_files([p]))
        self.recent_menu.setEnabled(bool(recent))

    def dragEnterEvent(self, ev):
        if any(u.isLocalFile() and u.toLocalFile().endswith(".py") for u in ev.mimeData().urls()):
            ev.acceptProposedAction()

    def dropEvent(self, ev):
        paths = [u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile() and u.toLocalFile().endswith(".py")]
        if paths:
            self.open_files(paths)
            ev.acceptProposedAction()

    # --- runs ----------------------------------------------------------------------------------
    def requests_for(self, keys) -> list[RunRequest]:
        out = []
        for fw, file, qualname in keys:
            out.append(RunRequest(file, qualname, fw, self.settings_panel.settings(fw)))
        return out

    def run(self, keys=None) -> bool:
        """Run `keys` ((framework, file, qualname)), default the checked ops. A run asked for while
        one is going on starts when it ends (the latest ask wins)."""
        problem = self.settings_panel.validate()
        if problem:
            self.summary.setText(f"cannot run: {problem}")
            return False
        keys = list(keys) if keys is not None else self.tree.checked_keys()
        if not keys:
            self.summary.setText("nothing to run: load a file and check some ops")
            return False
        if self.bridge.running:
            self._pending_keys = keys
            return True
        reqs = self.requests_for(keys)
        self._requested.update((_key(r), r) for r in reqs)
        for k in keys:
            self.tree.set_progress(k, "queued")
            self.diagnostics.clear_for(f"run:{k}")
        self.progress.setRange(0, len(reqs))
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m runs")
        self.progress.show()
        self._done_in_batch = 0
        self._batch_keys = [_key(r) for r in reqs]
        self._arrived, self._drawable = {}, {}
        self.summary.setText(f"running {len(reqs)} op run(s)…")
        if reqs[0].settings.checks:
            self.checks_matrix.set_pending(
                [(k, f"{self.tree.pair_name(k)} ({k[0]})") for k in self._batch_keys],
                reqs[0].settings.checks)
        return self.bridge.run(reqs)

    def run_current(self) -> None:
        pair = self.tree.current_pair()
        if pair:
            self.run([k for k in self.tree.ops if self.tree.pair_name(k) == pair])

    def cancel(self) -> None:
        self._pending_keys = None
        self.bridge.cancel()
        self.summary.setText("cancelling…")

    def _busy(self, busy: bool) -> None:
        self.act_run.setEnabled(not busy)
        self.act_cancel.setEnabled(busy)

    def _run_started(self, req: RunRequest) -> None:
        self.tree.set_progress(_key(req), "running")

    def _store(self, prepared) -> tuple:
        res = prepared.result
        key = _key(res.request)
        self.results[key] = res
        self.comparisons[key] = prepared.comparison
        self.series[key] = prepared.series
        if prepared.problem:
            self.diagnostics.add("error", f"{res.name} ({res.framework})",
                                 "internal error while comparing: " + prepared.problem,
                                 key=f"run:{key}")
        return key

    def _partial(self, prepared) -> None:
        """custom and default are in, numeric still running: show them at once. The result keeps
        the request as asked for, so the grid keeps its numeric column ("computing…")."""
        res = prepared.result
        asked = self._requested.get(_key(res.request))
        if asked is not None:
            prepared = replace(prepared, result=replace(res, request=asked))
        key = self._store(prepared)
        self.tree.set_progress(key, "running")
        self._schedule_grid(key, PARTIAL)

    def _arrived_raw(self, res, stage: int) -> None:
        key = _key(res.request)
        self._arrived[key] = max(stage, self._arrived.get(key, 0))

    def _schedule_grid(self, key, stage: int = FINAL) -> None:
        """One redraw for results arriving close together; the batch end redraws anyway. When
        every framework of the shown pair has a prepared result of this batch at the same stage
        (both partial, or both final), draw at once; when one is still being prepared, wait for
        it instead of drawing the other alone; else give it the 30 ms debounce."""
        self._drawable[key] = max(stage, self._drawable.get(key, 0))
        shown = self.tree.current_pair()
        pair = self.tree.pair_name(key)
        if shown is not None and pair != shown:
            return
        siblings = [k for k in self._batch_keys if self.tree.pair_name(k) == pair] or [key]
        if any(self._arrived.get(k, 0) > self._drawable.get(k, 0) for k in siblings):
            return                                  # its prepared result reschedules
        if shown is not None and len({self._drawable.get(k, 0) for k in siblings}) == 1:
            self.refresh_view()
        else:
            self._grid_timer.start()

    def _result(self, prepared) -> None:
        if isinstance(prepared, RunResult):      # a bare result: prepare it here
            from gradviz.plots.prepared import prepare
            prepared = prepare(prepared)
        res = prepared.result
        key = self._store(prepared)
        cancelled = res.error is not None and res.error.kind == "cancelled"
        self.tree.set_progress(key, "cancelled" if cancelled else res.status)
        self._done_in_batch += 1
        self.progress.setValue(self._done_in_batch)
        label = f"{res.name} ({res.framework})"
        if res.error is not None and not cancelled:
            self.diagnostics.add_error(label, res.error, key=f"run:{key}")
        for mode, err in res.mode_errors.items():
            self.diagnostics.add_error(f"{label} · {mode}", err, key=f"run:{key}")
        for f in prepared.findings:
            self.diagnostics.add_finding(label, f, key=f"run:{key}")
        for w in res.warnings:
            self.diagnostics.add("warning", label, w, key=f"run:{key}")
        self.log.add(f"{label} on {res.device or res.request.settings.device}", res.log)
        self._schedule_grid(key)

    def _checks_ready(self, res: RunResult) -> None:
        """An op's contract checks, after every plain result of the batch is in."""
        key = _key(res.request)
        if key in self.results:
            self.results[key] = replace(self.results[key], checks=res.checks)
        label = f"{res.name} ({res.framework})"
        self.checks_matrix.set_checks(key, label, res.checks)
        for f in contract_findings(res):
            self.diagnostics.add_finding(label, f, key=f"run:{key}")
        self.summary.setText(f"contract checks: {label} done")

    def _run_finished(self, results) -> None:
        from gradviz.compare import summary_counts
        self.progress.hide()
        self.last_batch = list(results)
        comps = [self.comparisons[_key(r.request)] for r in results if _key(r.request) in self.comparisons]
        counts = {k: v for k, v in summary_counts(comps).items() if v}
        failed = sum(1 for r in results if r.status != "ok")
        text = f"{len(results)} run(s): " + (", ".join(f"{v} {k}" for k, v in counts.items()) or "no tensors")
        if failed:
            text += f" — {failed} failed (see Diagnostics)"
        self.summary.setText(text)
        shown = self.tree.current_pair()
        if any(r.status != "ok" and self.tree.pair_name(_key(r.request)) == shown for r in results):
            self.tabs.setCurrentWidget(self.diagnostics)
        if self.tree.current_pair() is None and results:
            self.tree.select_pair(self.tree.pair_name(_key(results[0].request)))
        self.refresh_view()
        self.runDone.emit(list(results))
        if self._pending_keys is not None:
            keys, self._pending_keys = self._pending_keys, None
            self.run(keys)

    # --- view ----------------------------------------------------------------------------------
    def pair_results(self, pair: str) -> dict[str, RunResult]:
        ops = self.tree.pairs().get(pair, {})
        out = {}
        for fw, op in ops.items():
            r = self.results.get((fw, op.file, op.qualname))
            if r is not None:
                out[fw] = r
        return out

    def show_pair(self, pair: Optional[str]) -> None:
        self._grid_timer.stop()
        if not pair:
            if self._loading:
                self.grid.show_message("loading op files… (frameworks start in their own processes)")
            elif not self.files:
                self.grid.show_message("No op files. Open one with File ▸ Open or drop .py files here.")
            else:
                self.grid.show_message("No ops found in the loaded files (see Diagnostics).")
            self._numbers_args = None
            self.numbers.set_data({})
            self.pair_label.setText("")
            self.flow_view.set_figure(None)
            return
        results = self.pair_results(pair)
        comps, series = {}, {}
        for fw, r in results.items():
            comps[fw] = self.comparisons.get(_key(r.request))
            series[fw] = self.series.get(_key(r.request), {})
        modes = next((r.request.settings.modes for r in results.values()), MODES)
        ops = self.tree.pairs().get(pair, {})
        where = " · ".join(f"<span style='color:#888'>{fw}</span> {os.path.basename(o.file)}:{o.line}"
                           for fw, o in ops.items())
        self.pair_label.setText(f"<b>{pair}</b> &nbsp; {where}")
        self.flow_view.set_figure(build_flow_figure(list(results.values()), pair)
                                  if is_stack(list(results.values())) else None)
        if not self.grid.set_data(pair, results, modes, comps, series=series):
            return                              # the same results as shown: nothing to redo
        self._numbers_args = (pair, tuple(results.values()), comps, modes)
        self._fill_numbers()

    def _fill_numbers(self) -> None:
        """The numbers table of what the grid shows. Parity (torch vs tf) waits for the numeric
        pass (a partial result would give rows that change a moment later) and runs off the GUI
        thread when the arrays are big: the table shows its rows when they come."""
        pair, results, comps, modes = self._numbers_args
        if any(getattr(r, "partial", False) for r in results):
            rows, note = (), "waiting for the numeric pass…"
        else:
            rows = self.parity_worker.rows(pair, results)
            note = "computing…" if rows is None else ""
        self.numbers.set_data(comps, rows or (), modes, parity_note=note)

    def _parity_ready(self, pair: str, results: tuple, rows: list) -> None:
        self.parity_worker.accept(pair, results, rows)
        shown = self._numbers_args
        if shown and shown[0] == pair and len(shown[1]) == len(results) and \
                all(a is b for a, b in zip(shown[1], results)):
            self.numbers.set_parity(rows)

    def refresh_view(self) -> None:
        self.show_pair(self.tree.current_pair())

    def set_all_views(self, view: str) -> None:
        for name, row in self.grid.rows.items():
            if row.view_box.findData(view) >= 0:
                self.grid.set_view(name, view)

    def _tensor_clicked(self, name: str) -> None:
        self.grid.highlight(name)
        self.numbers.select(name)

    def _worker_state(self, st) -> None:
        lab = self.worker_labels.get(st.framework)
        if lab is None:
            return
        name = FRAMEWORK_LABELS.get(st.framework, st.framework)
        text = {"starting": f"{name}: loading…",
                "ready": f"{name} {st.version}: ready" + (f" ({st.import_s:.1f} s)" if st.import_s else ""),
                "busy": f"{name} {st.version}: running",
                "failed": f"{name}: failed",
                "stopped": f"{name}: restarting" if st.detail == "replacing" else f"{name}: stopped"}.get(st.state, st.state)
        lab.setText(("● " if st.state != "failed" else "✗ ") + text)
        lab.setToolTip(st.detail or text)
        lab.setStyleSheet(f"padding: 0 8px; color: {STATE_COLORS.get(st.state, '#333')}")
        if st.state == "failed":
            self.diagnostics.clear_for(f"worker:{st.framework}")
            self.diagnostics.add("error", name, f"{name} could not be loaded: {st.detail}",
                                 key=f"worker:{st.framework}")

    # --- misc ----------------------------------------------------------------------------------
    def save_screenshot(self, path: str) -> bool:
        QApplication.processEvents()
        return self.grab().save(path)

    def _screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save window image", "gradviz.png", "PNG (*.png)")
        if path and not self.save_screenshot(path):
            QMessageBox.warning(self, "gradviz", f"could not write {path}")

    def _about(self) -> None:
        engine = self.bridge.engine
        show_about(self, self.bridge.frameworks, engine.states() if engine is not None else {})

    def closeEvent(self, ev):
        self.qs.setValue("window/geometry", self.saveGeometry())
        self.settings_panel.save()
        self.qs.sync()
        self.bridge.close()
        super().closeEvent(ev)
