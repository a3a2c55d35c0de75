"""The contract checks as a matrix: one row per op run (op and framework), one column per check,
a colour and an icon per status. Clicking a cell shows the check's message, fix and file:line.
Rows fill in as each op's checks arrive, after its plain results. Every cell says what happened
in the op's last run: pass, fail, skip, "not run" (chosen, but the op's plain run failed),
"cancelled", or nothing (not chosen); the tab's count of failures counts those cells."""

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

from gradviz.model import CHECK_CANCELLED, CHECKS
from gradviz.qt.theme import check_style
from gradviz.vocab import CheckStatus, ErrorKind

EMPTY_TEXT = (
    "No contract checks chosen: tick them under settings → checks, then run. Each op "
    "is then put through double backward, non-contiguous upstreams, autocast, vmap, "
    "compilation and a precision re-run."
)


class ChecksMatrix(QWidget):
    cellChosen = Signal(object, str)  # op key, check name
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
        self.rows: list[tuple] = []  # op key per row
        self.checks: dict[tuple, dict] = {}  # op key -> {check name: CheckResult}
        self.unrun: dict[tuple, dict] = {}  # op key -> {check name: (status, why)}

    # --- filling -------------------------------------------------------------------------------
    def set_pending(self, keys_labels: list[tuple[tuple, str]], names) -> None:
        """Rows for the ops of a run about to start; their chosen checks show as pending, the
        others as not chosen. With no names (a run without checks) the rows of those ops that
        are in the matrix are emptied: what they showed was another run's."""
        for key, label in keys_labels:
            if not names and key not in self.rows:
                continue
            row = self._row_for(key, label)
            self.checks[key] = {}
            self.unrun[key] = {
                n: (CheckStatus.PENDING, "running after the plain results…") for n in names
            }
            for col, name in enumerate(CHECKS):
                self._paint(row, col, CheckStatus.PENDING if name in names else None, "")
        self._changed()

    def set_checks(self, key: tuple, label: str, checks) -> None:
        row = self._row_for(key, label)
        self.checks[key] = {c.name: c for c in checks}
        self.unrun.pop(key, None)
        for col, name in enumerate(CHECKS):
            c = self.checks[key].get(name)
            self._paint(row, col, shown_status(c) if c else None, c.message if c else "")
        self._changed()

    def finish_run(self, results) -> None:
        """The run ended: a check still pending was never run, because the op's plain run failed
        ("not run", with its error) or the run was cancelled first ("cancelled")."""
        from gradviz.app.results import request_key

        for res in results:
            key = request_key(res.request)
            waiting = [
                n for n, (st, _m) in self.unrun.get(key, {}).items() if st == CheckStatus.PENDING
            ]
            if not waiting or key not in self.rows:
                continue
            cancelled = res.error is not None and res.error.kind == ErrorKind.CANCELLED
            status = (
                CheckStatus.CANCELLED if cancelled or res.numeric_cancelled else CheckStatus.NOT_RUN
            )
            why = (
                f"{CHECK_CANCELLED}: the run was cancelled"
                if status == CheckStatus.CANCELLED
                else f"not run: the op's run failed ({res.error.one_line()})"
                if res.error
                else "not run: the op's run did not finish"
            )
            row = self.rows.index(key)
            for name in waiting:
                self.unrun[key][name] = (status, why)
                self._paint(row, CHECKS.index(name), status, why)
        self._changed()

    def _changed(self) -> None:
        """The count and the detail pane follow the cells."""
        if self.table.currentRow() >= 0:
            self._show_detail(self.table.currentRow(), max(0, self.table.currentColumn()))
        self.failuresChanged.emit(self.failures())
        self._empty_hint()

    def failures(self) -> int:
        return sum(
            c.status == CheckStatus.FAIL for per in self.checks.values() for c in per.values()
        )

    def status(self, key: tuple, name: str):
        """What the cell of (op key, check) says: pass, fail, skip, pending, not run, cancelled,
        or None (not chosen)."""
        item = self.table.item(self.rows.index(key), CHECKS.index(name))
        return item.data(Qt.UserRole) if item is not None else None

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
        item.setToolTip(message or ("not chosen for the last run" if status is None else ""))
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
            status, why = self.unrun.get(key, {}).get(name, (None, "not chosen for the last run"))
            if status is None:
                self.detail.setText(f"{title}<br>{html.escape(why)}")
            else:
                icon, fg, _ = check_style(status)
                self.detail.setText(
                    f"{title} — <span style='color:{fg}'>{icon} {status}</span>"
                    f"<br><br>{html.escape(why)}"
                )
        else:
            icon, fg, _ = check_style(shown_status(c))
            parts = [
                f"{title} — <span style='color:{fg}'>{icon} {shown_status(c)}</span>",
                html.escape(c.message),
            ]
            if c.fix:
                parts.append(f"<b>fix:</b> {html.escape(c.fix)}")
            if c.where:
                parts.append(f"<b>at</b> <code>{html.escape(_short_where(c.where))}</code>")
            self.detail.setText("<br><br>".join(parts))
        return True


def shown_status(check) -> str:
    """A check's status as its cell shows it: a skip because the run was cancelled first reads
    "cancelled" (it was not judged not applicable)."""
    if check.status == CheckStatus.SKIP and check.message.startswith(CHECK_CANCELLED):
        return CheckStatus.CANCELLED
    return check.status


def _color(item: QTableWidgetItem, status) -> None:
    _icon, fg, bg = check_style(status)
    item.setForeground(QBrush(QColor(fg)))
    item.setBackground(QBrush(QColor(bg)))


def _short_where(where: str) -> str:
    path, _, line = where.rpartition(":")
    try:
        rel = os.path.relpath(path)
    except ValueError:
        rel = path
    return f"{rel if not rel.startswith('..') else path}:{line}"
