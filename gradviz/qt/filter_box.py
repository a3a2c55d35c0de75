"""The op list's filter box. Esc there does what it does in any search field: it clears the
text, and a second Esc hands the focus to the op tree. It never reaches the window's Esc
(Run ▸ Cancel all): a user clearing the filter during Run all cancelled the whole queue."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QLineEdit


class FilterBox(QLineEdit):
    def __init__(self, next_focus=None, parent=None):
        super().__init__(parent)
        self.next_focus = next_focus  # the widget a second Esc moves to (the op tree)
        self.setPlaceholderText("filter ops by name or file…  (Esc clears)")
        self.setClearButtonEnabled(True)

    def event(self, ev):
        # claimed before the window's shortcuts see it
        if ev.type() == QEvent.Type.ShortcutOverride and ev.key() == Qt.Key.Key_Escape:
            ev.accept()
            return True
        return super().event(ev)

    def keyPressEvent(self, ev):
        if ev.key() != Qt.Key.Key_Escape:
            super().keyPressEvent(ev)
        elif self.text():
            self.clear()
        elif self.next_focus is not None:
            self.next_focus.setFocus(Qt.FocusReason.ShortcutFocusReason)
