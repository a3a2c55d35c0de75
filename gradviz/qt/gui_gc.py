"""Python's cyclic garbage collected on the GUI thread only, while a window is open.

Automatic collection runs on whichever thread happens to allocate: a worker thread (the run's
analysis pool) then frees a dropped widget cycle (a plot with its QMenu), whose destructor needs
the GIL while the GUI thread, holding the GIL, waits on that QObject's mutex: a deadlock seen in
the fuzz test. As pyqtgraph's GarbageCollector does, automatic collection is switched off and a
timer on the GUI thread collects by the same thresholds; the last window to close switches it
back on."""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

_open = 0
_was_enabled = True


class GuiGarbageCollector(QObject):
    def __init__(self, parent=None, interval_ms: int = 500):
        super().__init__(parent)
        global _open, _was_enabled
        if _open == 0:
            _was_enabled = gc.isenabled()
        _open += 1
        gc.disable()
        self._threshold = gc.get_threshold()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)
        self._timer.start()
        self._stopped = False

    def check(self) -> None:
        counts = gc.get_count()
        for gen in (2, 1, 0):
            if counts[gen] > self._threshold[gen]:
                gc.collect(gen)
                return

    def stop(self) -> None:
        """The window closes: collect once here, and give collection back when it was the last."""
        global _open
        if self._stopped:
            return
        self._stopped = True
        self._timer.stop()
        gc.collect()
        _open -= 1
        if _open == 0 and _was_enabled:
            gc.enable()
