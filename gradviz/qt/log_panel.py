"""Captured stdout/stderr of user code, per op and framework, in arrival order."""

from __future__ import annotations

from PySide6.QtGui import QFont, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit


class LogPanel(QPlainTextEdit):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setReadOnly(True)
        font = QFont("monospace")
        font.setStyleHint(QFont.Monospace)
        self.setFont(font)
        self.setMaximumBlockCount(20000)
        self.setPlaceholderText("what your ops print shows here")

    def add(self, title: str, text: str) -> None:
        if not text:
            return
        self.moveCursor(QTextCursor.End)
        self.appendPlainText(f"── {title} ──")
        self.appendPlainText(text.rstrip("\n"))
        self.moveCursor(QTextCursor.End)

    def note(self, text: str) -> None:
        self.appendPlainText(text)
