"""Triage in the Numbers tables: cells that sort by their value (not their rounded text), the
verdict column worst first with the larger error first among equals, a filter over the rows, and
the selected rows as tab-separated text with headers at full precision (what a spreadsheet or a
bug report takes; the cells show 4 significant digits)."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from gradviz.compare.verdicts import VERDICTS

SORT_ROLE = Qt.ItemDataRole.UserRole + 2  # the key a cell sorts by
ROW_ROLE = Qt.ItemDataRole.UserRole + 1  # (op, tensor, framework) on a row's first cell


class TriageTable(QTableWidget):
    """A table whose Copy key (Ctrl+C) copies the selected rows (copyRequested): the shortcut of
    its Copy action fires only while its window is active, and otherwise the view's own
    keyPressEvent copied one cell's rounded text."""

    copyRequested = Signal()

    def keyPressEvent(self, ev):
        if ev.matches(QKeySequence.StandardKey.Copy):
            self.copyRequested.emit()
            ev.accept()
            return
        super().keyPressEvent(ev)


class SortItem(QTableWidgetItem):
    """A cell ordered by its SORT_ROLE key: numbers as numbers (1e-3 < 2e-2, not as text),
    missing values below every number."""

    def __lt__(self, other):
        a, b = self.data(SORT_ROLE), other.data(SORT_ROLE)
        if a is None or b is None:
            return super().__lt__(other)
        return a < b


def verdict_rank(verdict: str) -> int:
    """How worrying a verdict is (compare's VERDICTS order); "match, numeric cancelled" counts
    as its verdict."""
    base = str(verdict).split(",", 1)[0]
    return VERDICTS.index(base) if base in VERDICTS else -1


def worst_error(tc) -> float:
    """The error a verdict rests on: custom against numeric where numeric ran, else against
    default (largest absolute difference); -1 where neither was measured."""
    if tc is None:
        return -1.0
    for pair in ("custom~numeric", "custom~default"):
        m = tc.metrics.get(pair)
        v = m.max_abs_err if m is not None else None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return math.inf if math.isnan(v) else float(v)
    return -1.0


def sort_key(value, verdict_key: tuple | None = None):
    """A cell's sort key: (rank, error) for the verdict, (1, number) for a number, (0, text) else
    (a missing value sorts as the empty text, below every number)."""
    if verdict_key is not None:
        return verdict_key
    if isinstance(value, bool) or value is None:
        return (0, "" if value is None else str(value))
    if isinstance(value, (int, float)):
        return (1, math.inf if isinstance(value, float) and math.isnan(value) else float(value))
    return (0, str(value).lower())


def full_text(value) -> str:
    """A value as copied: floats at full precision (repr round-trips), ints without separators,
    a missing value empty; tabs and newlines in text become spaces (one row, one line)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return repr(value)
    return " ".join(str(value).split())


def selected_text(table: QTableWidget, headers: list[str]) -> str:
    """The selected rows (in the order shown) of the visible columns, tab-separated, headers
    first; the raw value of each cell (Qt.UserRole) at full precision."""
    rows = sorted({i.row() for i in table.selectionModel().selectedRows()})
    cols = [c for c in range(table.columnCount()) if not table.isColumnHidden(c)]
    lines = ["\t".join(headers[c] for c in cols)]
    for r in rows:
        cells = []
        for c in cols:
            item = table.item(r, c)
            if item is None:
                cells.append("")
                continue
            raw = item.data(Qt.ItemDataRole.UserRole)
            if raw is None:  # a cell with no number: its text, "—" empty
                raw = "" if item.text() == "—" else item.text()
            cells.append(full_text(raw))
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"


def row_matches(table: QTableWidget, r: int, words: list[str]) -> bool:
    """Every word of the filter is in some visible cell of row `r` (case-insensitive)."""
    if not words:
        return True
    text = " ".join(
        table.item(r, c).text().lower()
        for c in range(table.columnCount())
        if table.item(r, c) is not None and not table.isColumnHidden(c)
    )
    return all(w in text for w in words)
