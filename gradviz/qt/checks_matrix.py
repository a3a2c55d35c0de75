"""The contract checks as a matrix: one row per op run (op and framework), one column per check,
a colour and an icon per status. Clicking a cell shows the check's message, fix and file:line.
Rows fill in as each op's checks arrive, after its plain results."""
from __future__ import annotations

import html
import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gradviz.model import CHECKS
from gradviz.qt.theme import check_style

EMPTY_TEXT = ("No contract checks chosen: tick them under settings → checks, then run. Each op "
              "is then put through double backward, non-contiguous upstreams, autocast, vmap, "
              "compilation and a precision re-run.")


class ChecksMatrix(QWidget):
    cellChosen = Signal(object, str)     # op key, check name
    failuresChanged = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.table = QTableWidget(0, len(CHECKS))
        self.table.setHorizontalHeaderLabels([c.replace("_", "\n") for c in CHECKS])
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.table.cellClicked.connect(self._clicked)
        self.table.currentCellChanged.connect(lambda r, c, *_: self._clicked(r, c))
        self.detail = QLabel(EMPTY_TEXT)
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.RichText)
        self.detail.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.detail.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.detail.setMargin(6)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setSizes([700, 400])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self.rows: list[tuple] = []                 # op key per row
        self.checks: dict[tuple, dict] = {}         # op key -> {check name: CheckResult}

    # --- filling -------------------------------------------------------------------------------
    def set_pending(self, keys_labels: list[tuple[tuple, str]], names) -> None:
        """Rows for the ops of a run about to start; their chosen checks show as pending."""
        for key, label in keys_labels:
            row = self._row_for(key, label)
            self.checks[key] = {}
            for col, name in enumerate(CHECKS):
                self._paint(row, col, "pending" if name in names else None, "")
        self._empty_hint()

    def set_checks(self, key: tuple, label: str, checks) -> None:
        row = self._row_for(key, label)
        self.checks[key] = {c.name: c for c in checks}
        for col, name in enumerate(CHECKS):
            c = self.checks[key].get(name)
            self._paint(row, col, c.status if c else None, c.message if c else "")
        if self.table.currentRow() == row:
            self._clicked(row, max(0, self.table.currentColumn()))
        self.failuresChanged.emit(self.failures())
        self._empty_hint()

    def failures(self) -> int:
        return sum(c.status == "fail" for per in self.checks.values() for c in per.values())

    def _row_for(self, key: tuple, label: str) -> int:
        if key in self.rows:
            row = self.rows.index(key)
        else:
            row = len(self.rows)
            self.rows.append(key)
            self.table.insertRow(row)
        head = QTableWidgetItem(label)
        head.setToolTip(key[1] if len(key) > 1 else label)
        self.table.setVerticalHeaderItem(row, head)
        return row

    def _paint(self, row: int, col: int, status, message: str) -> None:
        icon, _fg, _bg = check_style(status)
        item = QTableWidgetItem(f"{icon} {status}" if status else "")
        item.setTextAlignment(Qt.AlignCenter)
        item.setData(Qt.UserRole, status)
        _color(item, status)
        item.setToolTip(message or ("not chosen for this run" if status is None else ""))
        self.table.setItem(row, col, item)

    def restyle(self) -> None:
        """The window switched colour scheme: every cell's colours, and the detail, again."""
        for r in range(self.table.rowCount()):
            for c in range(self.table.columnCount()):
                item = self.table.item(r, c)
                if item is not None:
                    _color(item, item.data(Qt.UserRole))
        if self.rows and self.table.currentRow() >= 0:
            self._show_detail(self.table.currentRow(), max(0, self.table.currentColumn()))

    def _empty_hint(self) -> None:
        if not self.rows:
            self.detail.setText(EMPTY_TEXT)
        elif self.detail.text() == EMPTY_TEXT:
            self.detail.setText("Click a cell for the check's message, fix and file:line.")

    # --- reading -------------------------------------------------------------------------------
    def cell_text(self, key: tuple, name: str) -> str:
        item = self.table.item(self.rows.index(key), CHECKS.index(name))
        return item.text() if item is not None else ""

    def cell_color(self, key: tuple, name: str) -> str:
        item = self.table.item(self.rows.index(key), CHECKS.index(name))
        return item.background().color().name() if item is not None else ""

    def choose(self, key: tuple, name: str) -> None:
        """As a click on that cell."""
        self.table.setCurrentCell(self.rows.index(key), CHECKS.index(name))
        self._clicked(self.rows.index(key), CHECKS.index(name))

    def _clicked(self, row: int, col: int) -> None:
        if self._show_detail(row, col):
            self.cellChosen.emit(self.rows[row], CHECKS[col])

    def _show_detail(self, row: int, col: int) -> bool:
        """The check's message, fix and file:line beside the matrix; False: no such cell."""
        if not (0 <= row < len(self.rows) and 0 <= col < len(CHECKS)):
            return False
        key, name = self.rows[row], CHECKS[col]
        c = self.checks.get(key, {}).get(name)
        label = self.table.verticalHeaderItem(row).text()
        title = f"<b>{html.escape(name)}</b> · {html.escape(label)}"
        if c is None:
            pending = self.table.item(row, col) is not None and self.table.item(row, col).text()
            body = "running after the plain results…" if pending else "not chosen for this run"
            self.detail.setText(f"{title}<br>{body}")
        else:
            icon, fg, _ = check_style(c.status)
            parts = [f"{title} — <span style='color:{fg}'>{icon} {c.status}</span>",
                     html.escape(c.message)]
            if c.fix:
                parts.append(f"<b>fix:</b> {html.escape(c.fix)}")
            if c.where:
                parts.append(f"<b>at</b> <code>{html.escape(_short_where(c.where))}</code>")
            self.detail.setText("<br><br>".join(parts))
        return True


def _color(item: QTableWidgetItem, status) -> None:
    _icon, fg, bg = check_style(status)
    item.setForeground(QBrush(QColor(fg)))
    item.setBackground(QBrush(QColor(bg)))


def contract_findings(result) -> list:
    """The GV7xx diagnostics of an op's failed checks, as dicts (what the diagnostics panel
    takes; the command line prints the same)."""
    from gradviz.diagnostics.context import Context
    from gradviz.diagnostics.contract_checks import check
    return [f.as_dict() for f in check(Context(result))]


def _short_where(where: str) -> str:
    path, _, line = where.rpartition(":")
    try:
        rel = os.path.relpath(path)
    except ValueError:
        rel = path
    return f"{rel if not rel.startswith('..') else path}:{line}"
