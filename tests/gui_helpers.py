"""What the GUI tests share: how long they wait for a run, running ops in a real window and
waiting for the end, hovering a grid row, exports answered without dialogs. Import from here,
never from another test module."""

import os

from PySide6.QtCore import QPoint
from pytestqt.exceptions import TimeoutError as WaitTimeout

from gradviz.qt import export_actions as EA
from gradviz.qt import export_dialogs as ED

# How long a GUI test waits for a run (or a load) of the real workers to end: generous, since a
# busy machine is slow; a test never asserts on how long it took.
RUN_TIMEOUT_MS = 240_000


def run_keys(qtbot, win, keys):
    """Run `keys` in the window and return the batch's results once its run is done."""
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as blocker:
        assert win.run(keys)
    return blocker.args[0]


def keys_of(win, pair):
    return [k for k in win.state.loaded.ops if win.state.loaded.pair_name(k) == pair]


def shown_round_ste(qtbot, make_window, settings, files):
    """A window over `files` with round_ste run in all three modes and shown in the grid."""
    settings.setValue("run/modes", "default,custom,numeric")
    win = make_window([str(f) for f in files])
    run_keys(qtbot, win, keys_of(win, "round_ste"))
    win.tree.select_pair("round_ste")
    win.show_pair("round_ste")
    return win


def torch_cell(win, tensor, mode):
    """The grid's torch cell of `tensor` in `mode`."""
    return next(c for c in win.grid.rows[tensor].cells if c.framework == "torch" and c.mode == mode)


def move_mouse(qtbot, row, pos: QPoint) -> None:
    """Move the mouse over the row's canvas and wait until its scene sees the move. Under load
    the offscreen platform now and then drops a synthetic move (the scene gets no event at all);
    a second move one pixel on is then delivered."""
    seen = []
    row.canvas.scene().sigMouseMoved.connect(seen.append)
    try:
        qtbot.mouseMove(row.canvas.viewport(), pos)
        try:
            qtbot.waitUntil(lambda: bool(seen), timeout=1000)
        except WaitTimeout:
            qtbot.mouseMove(row.canvas.viewport(), pos + QPoint(1, 0))
            qtbot.waitUntil(lambda: bool(seen))
    finally:
        row.canvas.scene().sigMouseMoved.disconnect(seen.append)


class FakeDialogs(ED.Dialogs):
    """Answers every question an export asks from a script and records what was asked."""

    def __init__(self, paths=(), overwrite=True):
        self.paths = list(paths)
        self.overwrite = overwrite
        self.asked, self.errors, self.done_msgs, self.confirms = [], [], [], []

    def save_path(self, parent, caption, suggested, filters):
        self.asked.append((caption, os.path.basename(suggested), filters))
        return self.paths.pop(0) if self.paths else None

    def confirm_overwrite(self, parent, path):
        self.confirms.append(path)
        return self.overwrite

    def error(self, parent, title, text):
        self.errors.append((title, text))

    def done(self, parent, text):
        self.done_msgs.append(text)


def export_whole_run_json(win, path, monkeypatch):
    """File > Export > Whole run as JSON report of the window, into `path`, read back."""
    from PySide6.QtWidgets import QMenu

    from gradviz import report

    fake = FakeDialogs([str(path)])
    monkeypatch.setattr(ED, "dialogs", fake)
    menu = QMenu(win)
    EA.install(win.exports, menu)
    next(a for a in menu.actions() if a.text() == "Whole run as JSON report…").trigger()
    assert not fake.errors
    return report.read_json(str(path))


def scroll_right_until(qtbot, area, shown) -> None:
    """Scroll `area` to its right end until `shown()` holds: a row's layout can still widen the
    body after the bar first has a range, so the end is taken again until what is asserted is in
    sight (never a fixed wait)."""
    from PySide6.QtWidgets import QApplication

    bar = area.horizontalScrollBar()

    def at_end_and_shown() -> bool:
        bar.setValue(bar.maximum())
        QApplication.processEvents()
        return bar.maximum() > 0 and bar.value() == bar.maximum() and bool(shown())

    qtbot.waitUntil(at_end_and_shown)
