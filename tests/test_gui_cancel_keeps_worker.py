"""Cancel in the real window (issue 28, item 4): it never waits on a worker on the GUI thread,
and keeps a worker whose op was only cancelled (the next run does not import the framework
again). Esc right after Ctrl+R froze the window once, then drew stray top-level windows, and
the cancel replaced both workers."""

import time

from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

HANG_SRC = """
import torch


class Hangs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        open({marker!r}, "w").close()
        while True:
            pass
"""

GOOD_SRC = """
import torch


class Doubles(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return 2 * g
"""


def _shown_windows(win):
    return [
        w
        for w in QApplication.topLevelWidgets()
        if w.isVisible()
        and w is not win
        and w.isWindow()
        and not w.inherits("QMenu")
        and not w.inherits("QToolTip")
        and w.windowType() not in (Qt.WindowType.ToolTip, Qt.WindowType.Popup)
    ]


def test_cancel_of_a_running_op_returns_at_once_and_keeps_the_worker(
    qtbot, make_window, write_module, tmp_path, engine
):
    marker = tmp_path / "in_the_loop"
    hang = write_module("hangs_torch.py", HANG_SRC.format(marker=str(marker)))
    good = write_module("doubles_torch.py", GOOD_SRC)
    win = make_window([hang, good], {"run/modes": "default,custom"})
    worker = engine.workers["torch"]
    pid, starts = worker.pid(), worker.status.starts
    ticks, ended = [], []
    timer = QTimer(win)
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    win.runDone.connect(lambda _results: ended.append(time.monotonic()))
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run([("torch", hang, "Hangs"), ("torch", good, "Doubles")])
        qtbot.waitUntil(marker.exists, timeout=RUN_TIMEOUT_MS)
        win.cancel()
        returned = time.monotonic()
        # cancel asked and returned: the run is still unwinding in its thread, the GUI
        # thread goes on (its timers fire) until the batch ends
        assert win.bridge.running and win.summary.text() == "cancelling…"
        timer.start()
    timer.stop()
    # an unwind quicker than the timer's first tick proves nothing either way; one that took
    # a second with no tick means the GUI thread was held while it went on
    unwound = ended[0] - returned
    assert ticks or unwound < 1.0, (
        f"the GUI thread ran no timer in the {unwound:.1f} s the cancel unwound"
    )
    assert [r.error.kind for r in done.args[0]] == ["cancelled", "cancelled"]
    assert "its torch worker was kept" in done.args[0][0].error.message
    assert worker.pid() == pid and worker.status.starts == starts
    # the next run takes the same warm worker
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as again:
        assert win.run([("torch", good, "Doubles")])
    assert [r.status for r in again.args[0]] == ["ok"]
    assert worker.pid() == pid and worker.status.starts == starts
    assert _shown_windows(win) == []


def test_esc_right_after_ctrl_r_cancels_the_run_and_keeps_the_window_whole(
    qtbot, make_window, write_module, tmp_path, engine
):
    marker = tmp_path / "in_the_loop"
    hang = write_module("hangs_torch.py", HANG_SRC.format(marker=str(marker)))
    win = make_window([hang], {"run/modes": "default,custom"})
    win.activateWindow()
    win.tree.setFocus()
    worker = engine.workers["torch"]
    pid, starts = worker.pid(), worker.status.starts
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        qtbot.keyClick(win.tree, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
        assert win.bridge.running
        qtbot.keyClick(win.tree, Qt.Key.Key_Escape)
    assert [r.error.kind for r in done.args[0]] == ["cancelled"]
    assert worker.pid() == pid and worker.status.starts == starts
    assert win.act_run.isEnabled() and not win.act_cancel.isEnabled()
    assert _shown_windows(win) == []
    assert win.tree.shown_mark(("torch", hang, "Hangs"))[0] == "⊘"
