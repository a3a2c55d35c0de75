"""Run something once the window has painted its first frame: what the first frame does not need
(the workers' start, pyqtgraph's import) waits for it instead of delaying it.

A zero timer set at `show()` fires before the first paint (the window is exposed and painted in a
later pass of the event loop), so the paint itself is watched for.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

NEVER_PAINTED_S = 1.0  # a window that is never exposed (started minimised) does not wait longer


class _FirstPaint(QObject):
    def __init__(self, win, then: Callable[[], None]):
        super().__init__(win)
        self.win, self.then, self.done = win, then, False

    def eventFilter(self, obj, ev):
        # any widget of the window painting counts: a covered QMainWindow itself may never paint
        if (
            not self.done
            and ev.type() == QEvent.Type.Paint
            and isinstance(obj, QWidget)
            and obj.window() is self.win
        ):
            self.fire()
        return False

    def fire(self) -> None:
        if self.done:
            return
        self.done = True
        QApplication.instance().removeEventFilter(self)
        # after the whole frame: the paint event seen is that of its first widget
        QTimer.singleShot(0, self, self.then)


def after_first_paint(win, then: Callable[[], None]) -> None:
    """Call `then()` once, on the GUI thread, after `win`'s first frame is painted (or after
    NEVER_PAINTED_S if it is not painted by then). Call before `win.show()`."""
    watch = _FirstPaint(win, then)
    QApplication.instance().installEventFilter(watch)
    QTimer.singleShot(int(NEVER_PAINTED_S * 1000), watch, watch.fire)  # none once win is gone
