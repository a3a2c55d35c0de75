"""The main window's actions, menus, tool bar and recent-files list: what each item is called,
its shortcut, and which window command it sends."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QToolBar

from gradviz.app.settings_schema import Key

RECENT_MAX = 10
VIEWS = (
    ("values", "Values by index"),
    ("histogram", "Histograms"),
    ("scatter", "Custom vs default and vs numeric"),
    ("difference", "Difference (custom − default, custom − numeric)"),
    ("vs_input", "Gradient vs input"),
)


@dataclass(frozen=True)
class WindowMenus:
    """What build_menus makes: the window's actions and the menus it fills later (MainWindow
    takes each as an attribute of its own)."""

    act_open: QAction
    act_open_module: QAction
    act_reload: QAction
    act_run: QAction
    act_run_one: QAction
    act_cancel: QAction
    act_skip: QAction
    act_watch: QAction
    act_screenshot: QAction
    act_quit: QAction
    act_reset_settings: QAction
    act_find: QAction
    act_log_scale: QAction
    act_traps: QAction
    recent_menu: QMenu
    export_menu: QMenu
    view_menu: QMenu


def build_menus(win, qs, grid) -> WindowMenus:
    """The actions, the menu bar and the run tool bar of MainWindow `win`, each item sending
    the window's command; View > Log scale saved in `qs` and drawn by the `grid`."""
    act_open = QAction(
        "&Open op files…", win, shortcut=QKeySequence.Open, triggered=win.open_dialog
    )
    act_open_module = QAction("Open &module…", win, triggered=win.open_module_dialog)
    act_open_module.setToolTip("open a module by its dotted name, e.g. mypkg.quant_ops")
    act_reload = QAction("Re&load files", win, shortcut=QKeySequence("F5"), triggered=win.reload)
    act_run = QAction("▶ Run", win, shortcut=QKeySequence("Ctrl+R"), triggered=lambda: win.run())
    act_run.setToolTip("run the checked ops in every framework (Ctrl+R)")
    act_run_one = QAction(
        "Run selected op", win, shortcut=QKeySequence("Ctrl+Shift+R"), triggered=win.run_current
    )
    act_cancel = QAction("■ Cancel all", win, shortcut=QKeySequence("Esc"), triggered=win.cancel)
    act_cancel.setToolTip("stop the run: the op running now and every op still queued (Esc)")
    act_cancel.setEnabled(False)
    act_skip = QAction(
        "⇥ Skip this op", win, shortcut=QKeySequence("Shift+Esc"), triggered=win.skip
    )
    act_skip.setToolTip(
        "stop the op a worker runs now (the shown pair's, else each worker's) and "
        "go on with the rest of the queue (Shift+Esc)"
    )
    act_skip.setEnabled(False)
    act_watch = QAction("Watch files and re-run", win, checkable=True)
    act_watch.setChecked(str(qs.value(Key.WATCH, "true")).lower() == "true")
    act_screenshot = QAction("Save window image…", win, triggered=win.screenshot_dialog)
    act_quit = QAction("&Quit", win, shortcut=QKeySequence.Quit, triggered=win.close)
    menu = win.menuBar()
    fm = menu.addMenu("&File")
    fm.addAction(act_open)
    fm.addAction(act_open_module)
    recent_menu = fm.addMenu("Open &recent")
    fm.addAction(act_reload)
    fm.addSeparator()
    export_menu = fm.addMenu("&Export")
    fm.addAction(act_screenshot)
    fm.addSeparator()
    fm.addAction(act_quit)
    rm = menu.addMenu("&Run")
    for a in (act_run, act_run_one, act_skip, act_cancel):
        rm.addAction(a)
    rm.addSeparator()
    rm.addAction(act_watch)
    act_reset_settings = rm.addAction("Reset settings to defaults", win.reset_settings)
    act_reset_settings.setToolTip("every run setting back to what a fresh install uses")
    view_menu = menu.addMenu("&View")
    # Ctrl+F: the filter of what is in front: the Numbers / Worst tensors table with the focus
    # in it, else the op list's
    act_find = view_menu.addAction("Filter…", lambda: focus_filter(win))
    act_find.setShortcut(QKeySequence("Ctrl+F"))
    view_menu.addSeparator()
    for view, label in VIEWS:
        view_menu.addAction(f"All rows: {label}", lambda v=view: win.set_all_views(v))
    view_menu.addSeparator()
    act_log_scale = view_menu.addAction("Log scale (|gradient|)")
    act_log_scale.setCheckable(True)
    act_log_scale.setToolTip(
        "values and difference views as log10 |g| (zeros left out, "
        "counted in each plot's note); exports draw it too"
    )
    act_log_scale.setChecked(qs.value(Key.LOG_SCALE, False, type=bool))
    grid.set_log_scale(act_log_scale.isChecked())

    def log_scale(on: bool) -> None:
        qs.setValue(Key.LOG_SCALE, bool(on))
        grid.set_log_scale(on)

    act_log_scale.toggled.connect(log_scale)
    hm = menu.addMenu("&Help")
    act_traps = hm.addAction("Open trap examples", win.open_trap_examples)
    act_traps.setToolTip("ops that go wrong on purpose: every diagnostic gradviz gives")
    hm.addSeparator()
    hm.addAction("About gradviz", win.about)
    tb = QToolBar("Run")
    tb.setObjectName("runToolbar")
    tb.setMovable(False)
    for a in (act_open, act_run, act_skip, act_cancel):
        tb.addAction(a)
    tb.addSeparator()
    tb.addAction(act_watch)
    win.addToolBar(tb)
    return WindowMenus(
        act_open=act_open,
        act_open_module=act_open_module,
        act_reload=act_reload,
        act_run=act_run,
        act_run_one=act_run_one,
        act_cancel=act_cancel,
        act_skip=act_skip,
        act_watch=act_watch,
        act_screenshot=act_screenshot,
        act_quit=act_quit,
        act_reset_settings=act_reset_settings,
        act_find=act_find,
        act_log_scale=act_log_scale,
        act_traps=act_traps,
        recent_menu=recent_menu,
        export_menu=export_menu,
        view_menu=view_menu,
    )


def focus_filter(win) -> None:
    """Focus (and select the text of) the filter box of the table the focus is in, else the op
    list's filter."""
    from PySide6.QtWidgets import QApplication

    focus = QApplication.focusWidget()
    box = win.op_filter
    for table in (win.numbers, win.worst):
        if focus is not None and (focus is table or table.isAncestorOf(focus)):
            box = table.filter
    box.setFocus()
    box.selectAll()


class RecentFiles:
    """The File ▸ Open recent menu over the files/recent setting (Key.RECENT) (newest first)."""

    def __init__(self, qsettings, menu, open_files) -> None:
        self.qs, self.menu, self._open = qsettings, menu, open_files
        self.refresh()

    def add(self, path: str) -> None:
        recent = [p for p in self.paths() if p != path]
        self.qs.setValue(Key.RECENT, [path] + recent[: RECENT_MAX - 1])
        self.refresh()

    def paths(self) -> list[str]:
        v = self.qs.value(Key.RECENT, [])
        return [v] if isinstance(v, str) else list(v or [])

    def refresh(self) -> None:
        self.menu.clear()
        recent = self.paths()
        for p in recent:
            self.menu.addAction(p, lambda p=p: self._open([p]))
        self.menu.setEnabled(bool(recent))


def hook_exports(exports, menu, grid) -> None:
    """File ▸ Export `menu` and the `grid`'s plot context menus, over `exports` (a
    qt/export_actions.WindowExports of the window's parts)."""
    from gradviz.qt.export_actions import add_plot_actions, install

    install(exports, menu)
    grid.plot_menu_hook = lambda m, tensor, fw, mode: add_plot_actions(m, exports, tensor, fw, mode)
