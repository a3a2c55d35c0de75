"""Errors of user code (failed runs, modes that raised, files that did not load) and diagnostic
findings, each with the user's file:line. Clicking a row copies its location to the clipboard.
"""
from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from gradviz.diagnostics import diagnose_load

SEVERITY_COLORS = {"error": "#9a0d0d", "warning": "#a3560d", "info": "#1f4fa3"}


class DiagnosticsPanel(QTreeWidget):
    copied = Signal(str)
    countChanged = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setColumnCount(4)
        self.setHeaderLabels(["", "op", "message", "where"])
        self.setRootIsDecorated(False)
        self.setAlternatingRowColors(True)
        self.setWordWrap(True)
        self.itemClicked.connect(self._copy)
        self.setToolTip("click a row to copy its file:line")
        from PySide6.QtWidgets import QHeaderView
        head = self.header()
        head.setStretchLastSection(False)
        head.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        head.setSectionResizeMode(1, QHeaderView.ResizeToContents)
        head.setSectionResizeMode(2, QHeaderView.Stretch)
        head.setSectionResizeMode(3, QHeaderView.ResizeToContents)

    def clear_for(self, key_prefix: str | None = None) -> None:
        if key_prefix is None:
            self.clear()
        else:
            for i in reversed(range(self.topLevelItemCount())):
                if str(self.topLevelItem(i).data(0, Qt.UserRole)).startswith(key_prefix):
                    self.takeTopLevelItem(i)
        self.countChanged.emit(self.topLevelItemCount())

    def add(self, severity: str, op: str, message: str, where: str = "", detail: str = "",
            key: str = "") -> QTreeWidgetItem:
        mark = {"error": "✗", "warning": "!", "info": "i"}.get(severity, "·")
        import os
        path, _, line = where.rpartition(":")
        short = f"{os.path.basename(path)}:{line}" if path else where
        item = QTreeWidgetItem([mark, op, message.splitlines()[0] if message else "", short])
        item.setData(0, Qt.UserRole, key)
        item.setData(3, Qt.UserRole, where)
        tip = message + (("\n\n" + detail) if detail else "")
        for c in range(4):
            item.setToolTip(c, tip)
        item.setForeground(0, QBrush(QColor(SEVERITY_COLORS.get(severity, "#333"))))
        item.setForeground(2, QBrush(QColor(SEVERITY_COLORS.get(severity, "#333"))))
        self.addTopLevelItem(item)
        self.countChanged.emit(self.topLevelItemCount())
        return item

    def add_error(self, op: str, err, key: str = "") -> QTreeWidgetItem:
        """err: gradviz.model.ErrorInfo."""
        return self.add("error", op, f"{err.type}: {err.message}", err.where, err.traceback, key)

    def add_finding(self, op: str, finding: dict, key: str = "") -> QTreeWidgetItem:
        msg = finding.get("message", "")
        if finding.get("code"):
            msg = f"[{finding['code']}] {msg}"
        fix = finding.get("fix", "")
        return self.add(finding.get("severity", "info"), op, msg, finding.get("where", ""),
                        f"fix: {fix}" if fix else "", key)

    def messages(self) -> list[str]:
        return [self.topLevelItem(i).text(2) for i in range(self.topLevelItemCount())]

    def _copy(self, item: QTreeWidgetItem, _column: int) -> None:
        text = item.data(3, Qt.UserRole) or item.text(2)
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(text)

    # --- what the window hands over --------------------------------------------------------------
    def show_load(self, catalogs, files) -> bool:
        """The load errors of `files` (replacing earlier ones); True when there is one."""
        for f in files:
            self.clear_for(f"load:{f}")
        failed = False
        for cat in catalogs:
            if cat.error is not None:
                failed = True
                name = os.path.basename(cat.file) + (f" ({cat.framework})" if cat.framework else "")
                self.add_error(name, cat.error, key=f"load:{cat.file}")
                for f in diagnose_load(cat.error, cat.file, cat.framework):
                    self.add_finding(name, f.as_dict(), key=f"load:{cat.file}")
        return failed

    def show_result(self, key, analysis) -> None:
        """A result's errors, findings and warnings (a partial result: only a comparison bug;
        the rest comes with the final result)."""
        res = analysis.result
        label, tag = f"{res.name} ({res.framework})", f"run:{key}"
        if analysis.problem:
            self.add("error", label, "internal error while comparing: " + analysis.problem, key=tag)
        if res.partial:
            return
        if res.error is not None and res.error.kind != "cancelled":
            self.add_error(label, res.error, key=tag)
        for mode, err in res.mode_errors.items():
            self.add_error(f"{label} · {mode}", err, key=tag)
        for f in analysis.findings:
            self.add_finding(label, f.as_dict(), key=tag)
        for w in res.warnings:
            self.add("warning", label, w, key=tag)
