"""While an op runs the header above the grid shows its elapsed time against its timeout; "Skip
this op" stops that op alone (its worker is replaced) and the rest of the queue runs: one hanging
op no longer holds up Run all for the full timeout."""

import re

import numpy as np
from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402

from gradviz.app.settings_file import SettingsFile

OPS_SRC = """
import time
import torch

class Hangs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        time.sleep(3600)
        return x

    @staticmethod
    def backward(ctx, g):
        return g

class Right(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0
"""


def test_running_op_shows_elapsed_and_skip_goes_on_with_the_queue(qtbot, make_window, write_module):
    path = write_module("ops.py", OPS_SRC)
    win = make_window(
        [path],
        {
            "run/modes": "default,custom,numeric",  # two passes: Hangs must
            "run/timeout": 90,
        },
    )  # run in neither
    hangs, right = ("torch", path, "Hangs"), ("torch", path, "Right")
    win.tree.select_pair("Hangs")
    assert not win.act_skip.isEnabled()
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run([hangs, right])
        assert win.act_skip.isEnabled() and win.act_cancel.text() == "■ Cancel all"
        qtbot.waitUntil(lambda: win.state.in_flight() == [hangs], timeout=RUN_TIMEOUT_MS)
        # the header counts the elapsed time up against the timeout
        pattern = r"running (\d+\.\d) s / 90 s timeout"
        qtbot.waitUntil(
            lambda: bool(re.search(pattern, win.pair_label.text())), timeout=RUN_TIMEOUT_MS
        )
        first = float(re.search(pattern, win.pair_label.text()).group(1))
        # the grid says it is running, not "not run yet"
        assert win.grid.message() == "Hangs: running… (elapsed and timeout above)"
        qtbot.waitUntil(
            lambda: float(re.search(pattern, win.pair_label.text()).group(1)) > first,
            timeout=RUN_TIMEOUT_MS,
        )
        win.act_skip.trigger()
    by_name = {r.request.qualname: r for r in done.args[0]}
    skipped = by_name["Hangs"]
    assert skipped.error.kind == "cancelled" and skipped.error.message == "skipped by the user"
    ok = by_name["Right"]  # the queue went on, in both passes
    assert ok.status == "ok" and not ok.partial
    np.testing.assert_allclose(ok.tensor("x").grads["custom"], 2.0)
    assert "numeric" in ok.tensor("x").grads
    assert win.state.progress.states[hangs] == "cancelled"
    assert win.state.op_mark(right) == "match"
    assert "1 cancelled" in win.summary.text() and "failed" not in win.summary.text()
    assert "running" not in win.pair_label.text() and not win.act_skip.isEnabled()
    assert "running" not in win.grid.message()
    win.show_pair("Hangs")
    assert win.grid.message().startswith("Hangs: cancelled before it finished: nothing to draw")
    assert "skipped by the user" in win.grid.message()


def test_run_tool_bar_labels_are_in_the_window_font(qtbot, engine, tmp_path):
    """The walkthrough under xvfb showed "⏭ Skip this op" as a box: DejaVu Sans, the usual Linux
    default, has no U+23ED. Every character of the run tool bar's labels must be in the font."""
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QToolBar

    from gradviz.qt.main_window import MainWindow

    win = MainWindow([], engine=engine, qsettings=SettingsFile(str(tmp_path / "gradviz.ini")))
    qtbot.addWidget(win)
    bar = win.findChild(QToolBar, "runToolbar")
    labels = [a.text() for a in bar.actions() if a.text()]
    assert "⇥ Skip this op" in labels and "■ Cancel all" in labels
    for action in bar.actions():
        button = bar.widgetForAction(action)
        if button is None or not action.text():
            continue
        metrics = QFontMetrics(button.font())
        missing = [c for c in action.text() if not metrics.inFontUcs4(ord(c))]
        assert not missing, (action.text(), missing, button.font().family())


def test_keys_skip_cancel_and_esc_in_the_filter_box(qtbot, make_window, write_module):
    """Shift+Esc skips the op running now and the queue goes on; Esc in the filter box clears
    it (a second one moves to the op tree) and cancels nothing; Esc anywhere else cancels all."""
    from PySide6.QtCore import Qt

    path = write_module(
        "ops.py", OPS_SRC.replace("class Right", "class Hangs2(Hangs):\n    pass\n\n\nclass Right")
    )
    win = make_window([path], {"run/modes": "default,custom", "run/timeout": 90})
    hangs, hangs2, right = (("torch", path, n) for n in ("Hangs", "Hangs2", "Right"))
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run([hangs, hangs2, right])
        qtbot.waitUntil(lambda: win.state.in_flight() == [hangs], timeout=RUN_TIMEOUT_MS)
        qtbot.keyClick(win.tree, Qt.Key_Escape, Qt.ShiftModifier)  # Skip this op
        qtbot.waitUntil(lambda: win.state.in_flight() == [hangs2], timeout=RUN_TIMEOUT_MS)
        win.op_filter.setFocus()
        qtbot.waitUntil(win.op_filter.hasFocus)
        qtbot.keyClicks(win.op_filter, "Hang")
        assert win.tree.visible_keys() == [hangs, hangs2]
        qtbot.keyClick(win.op_filter, Qt.Key_Escape)
        assert win.op_filter.text() == "" and len(win.tree.visible_keys()) == 3
        qtbot.keyClick(win.op_filter, Qt.Key_Escape)
        qtbot.waitUntil(win.tree.hasFocus)
        assert win.state.in_flight() == [hangs2] and win.act_cancel.isEnabled()  # still running
        qtbot.keyClick(win.tree, Qt.Key_Escape)  # Cancel all
    by_name = {r.request.qualname: r for r in done.args[0]}
    assert by_name["Hangs"].error.message == "skipped by the user"
    assert by_name["Hangs2"].error.kind == "cancelled"
    assert by_name["Hangs2"].error.message != "skipped by the user"
    assert win.state.progress.states[hangs2] == "cancelled"


def test_cancel_all_keeps_the_last_result_of_ops_it_reached_in_the_queue(
    qtbot, make_window, write_module
):
    """Cancel all during Run all: the op running is cancelled; those still queued keep the result
    they had (Cancel used to replace every queued op's verdict by ⊘ and its plots by nothing)."""
    path = write_module("ops.py", OPS_SRC)
    win = make_window([path], {"run/modes": "default,custom", "run/timeout": 90})
    hangs, right = ("torch", path, "Hangs"), ("torch", path, "Right")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run([right])
    before = win.state.results.get(right)
    assert before.result.status == "ok" and win.state.op_mark(right) == "match"
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run([hangs, right])
        qtbot.waitUntil(lambda: win.state.in_flight() == [hangs], timeout=RUN_TIMEOUT_MS)
        assert win.state.progress.states[right] == "queued"
        win.cancel()
    by_name = {r.request.qualname: r for r in done.args[0]}
    assert by_name["Right"].error.kind == "cancelled"  # the engine's answer for it...
    assert win.state.results.get(right) is before  # ...and the window keeps what it had
    assert win.state.op_mark(right) == "match" and win.tree.shown_mark(right)[0] == "✓"
    assert not win.state.is_stale(right)
    assert win.state.op_mark(hangs) == "cancelled"
    win.show_pair("Right")
    assert win.grid.message() == "" and "x" in win.grid.rows
    assert "2 cancelled" in win.summary.text()


def test_esc_in_a_settings_field_undoes_the_edit_and_never_cancels_the_run(
    qtbot, make_window, write_module
):
    """Esc in the settings panel's text and number fields undoes what was typed since the field
    took the focus (a second Esc leaves it for the op tree); the run goes on. Esc in the tree
    then cancels all, as before."""
    from PySide6.QtCore import Qt

    path = write_module("ops.py", OPS_SRC)
    win = make_window([path], {"run/modes": "default,custom", "run/timeout": 90})
    hangs = ("torch", path, "Hangs")
    sp = win.settings_panel
    # (field, typed over what it shows, or after it, keys, its text before, after the keys)
    typed = (
        (sp.shape, False, "x5", "200", "200x5"),
        (sp.range, False, "0", "-3,3", "-3,30"),
        (sp.seed, True, "7", "0", "7"),
        (sp.timeout, True, "905", "90.00 s", "905 s"),
        (sp.upstream.lineEdit(), False, ":2", "ones", "ones:2"),
    )
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run([hangs])
        qtbot.waitUntil(lambda: win.state.in_flight() == [hangs], timeout=RUN_TIMEOUT_MS)
        for field, over, keys, before, after in typed:
            field.setFocus()
            qtbot.waitUntil(field.hasFocus)
            qtbot.keyClick(field, Qt.Key_A, Qt.ControlModifier) if over else qtbot.keyClick(
                field, Qt.Key_End
            )
            qtbot.keyClicks(field, keys)
            assert field.text() == after
            qtbot.keyClick(field, Qt.Key_Escape)  # undo what was typed
            assert field.text() == before and field.hasFocus()
            assert win.state.in_flight() == [hangs] and win.act_cancel.isEnabled()
            qtbot.keyClick(field, Qt.Key_Escape)  # nothing to undo: leave the field
            qtbot.waitUntil(win.tree.hasFocus)
            assert win.state.in_flight() == [hangs] and win.act_cancel.isEnabled()
        assert sp.settings("torch").shape == (200,) and sp.settings("torch").seed == 0
        assert sp.settings("torch").timeout == 90 and sp.settings("torch").upstream == "ones"
        # an edit finished with Enter stays: Esc then only leaves the field
        sp.seed.setFocus()
        qtbot.waitUntil(sp.seed.hasFocus)
        qtbot.keyClick(sp.seed, Qt.Key_A, Qt.ControlModifier)
        qtbot.keyClicks(sp.seed, "6")
        qtbot.keyClick(sp.seed, Qt.Key_Return)
        qtbot.keyClick(sp.seed, Qt.Key_Escape)
        qtbot.waitUntil(win.tree.hasFocus)
        assert sp.seed.value() == 6 and win.act_cancel.isEnabled()
        qtbot.keyClick(win.tree, Qt.Key_Escape)  # Esc elsewhere: Cancel all
    (res,) = done.args[0]
    assert res.error.kind == "cancelled" and res.error.message != "skipped by the user"
