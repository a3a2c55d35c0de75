"""The numbers behind the grid: per tensor and framework the engine's verdict, per-mode stats and
pair metrics (from gradviz.compare), coloured by verdict; below, torch-vs-tf parity rows.
Selecting a row emits the tensor's name (the grid highlights its plots). Which columns show is
the user's choice (qt/numbers_columns.py: right-click the header).
"""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QSettings, Qt, Signal
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

from gradviz.compare.verdicts import shown_verdict
from gradviz.model import MODES
from gradviz.qt.numbers_columns import ColumnChooser, header_label
from gradviz.qt.theme import verdict_text, verdict_tint

STAT_KEYS = ("min", "max", "mean")
PAIRS = ("custom~default", "custom~numeric", "default~numeric")


def fmt(x) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def columns(modes=MODES) -> list[tuple[str, str, str]]:
    """(header, source, key): source is 'row', a mode (stats) or a pair (metrics)."""
    cols = [("tensor", "row", "name"), ("fw", "row", "framework"), ("verdict", "row", "verdict"),
            ("shape", "row", "shape")]
    # how far apart the modes are comes first (what a verdict rests on), each mode's own
    # numbers after it: at ~27 columns, the comparisons sat off-screen to the right
    for p in PAIRS:
        a, b = p.split("~")
        if a in modes and b in modes:
            cols += [(f"{p} max abs err", p, "max_abs_err"), (f"{p} max rel err", p, "max_rel_err"),
                     (f"{p} differ", p, "n_differ")]
    cols.append(("tolerance", "row", "tolerance"))
    for m in modes:
        cols += [(f"{m} {k}", m, k) for k in STAT_KEYS]
        cols.append((f"{m} NaN/Inf", m, "nonfinite"))
    cols.append(("explanation", "row", "explanation"))
    return cols


class NumbersTable(QWidget):
    tensorSelected = Signal(str)

    def __init__(self, qsettings: Optional[QSettings] = None, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        split = QSplitter(Qt.Vertical)
        self.table = QTableWidget()
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.itemSelectionChanged.connect(self._selected)
        self.chooser = ColumnChooser(self.table, qsettings)    # right-click the header
        self.parity = QTableWidget()
        self.parity.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.parity.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.parity.verticalHeader().setVisible(False)
        self.parity.itemSelectionChanged.connect(self._parity_selected)
        box = QWidget()
        bl = QVBoxLayout(box)
        bl.setContentsMargins(0, 0, 0, 0)
        self.parity_label = QLabel("<b>torch ↔ tf parity</b>")
        bl.addWidget(self.parity_label)
        bl.addWidget(self.parity)
        # compact rows: the tab shares ~260 px with two headers, and 30 px rows left 2 in sight
        for t in (self.table, self.parity):
            t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)
        split.addWidget(self.table)
        split.addWidget(box)
        # half each: parity (do torch and tf agree?) got a quarter, two of its ~12 rows in sight
        split.setSizes([200, 200])
        lay.addWidget(split)
        self.rows: list[tuple[str, str]] = []     # (tensor, framework) per table row
        self.verdicts: list[str] = []             # the verdict of each table row (its colours)
        self.parity_verdicts: list[str] = []
        self._cols: list[tuple[str, str, str]] = []

    def set_data(self, comparisons: dict, parity_rows=(), modes=MODES, parity_note: str = "") -> None:
        """comparisons: {framework: OpComparison}; parity_rows: compare.parity(...) rows;
        parity_note: why there are no parity rows yet (they come later through set_parity)."""
        self._cols = columns(modes)
        t = self.table
        t.setUpdatesEnabled(False)
        try:
            self._fill(comparisons)
        finally:
            t.setUpdatesEnabled(True)
        self.set_parity(parity_rows, parity_note)

    def _fill(self, comparisons: dict) -> None:
        t = self.table
        t.blockSignals(True)
        t.clear()
        t.setColumnCount(len(self._cols))
        t.setHorizontalHeaderLabels([header_label(h, src) for h, src, _k in self._cols])
        self.chooser.apply(self._cols)
        entries = []
        for fw, comp in comparisons.items():
            if comp is None:
                continue
            for tc in comp.tensors:
                entries.append((fw, tc))
            if not comp.tensors and comp.error is not None:
                entries.append((fw, None))
        order: dict[str, int] = {}
        for i, (_fw, tc) in enumerate(entries):
            if tc is not None:
                order.setdefault(tc.name, i)
        entries.sort(key=lambda e: (order.get(e[1].name, -1) if e[1] is not None else -1, e[0]))
        t.setRowCount(len(entries))
        self.rows, self.verdicts = [], []
        for r, (fw, tc) in enumerate(entries):
            if tc is None:
                comp = comparisons[fw]
                self._row_error(r, fw, comp)
                continue
            self.rows.append((tc.name, fw))
            self.verdicts.append(shown_verdict(tc))
            for c, (_h, src, key) in enumerate(self._cols):
                value = self._value(fw, tc, src, key)
                item = QTableWidgetItem(fmt(value) if src != "row" or key in ("tolerance",) else str(value))
                item.setData(Qt.UserRole, value)
                if key == "verdict":
                    f = item.font()
                    f.setBold(True)
                    item.setFont(f)
                if key == "explanation":
                    item.setToolTip(str(value))
                if src in MODES and tc.stats.get(src, {}).get("absent"):
                    item.setToolTip(tc.stats[src].get("reason", "no gradient"))
                t.setItem(r, c, item)
            self._paint_row(r)
        t.resizeColumnsToContents()
        for c, (_h, _s, key) in enumerate(self._cols):
            if key == "explanation":
                t.setColumnWidth(c, 420)
        t.blockSignals(False)

    def _row_error(self, r: int, fw: str, comp) -> None:
        self.rows.append(("", fw))
        self.verdicts.append("error")
        for c, (_h, _src, key) in enumerate(self._cols):
            text = {"tensor": "(run failed)", "framework": fw, "verdict": "error",
                    "explanation": comp.error.one_line()}.get(key, "")
            self.table.setItem(r, c, QTableWidgetItem(text))
        self._paint_row(r)

    def _paint_row(self, r: int) -> None:
        """A table row on its verdict's tint, the verdict cell in its verdict's colour."""
        verdict = self.verdicts[r]
        tint = QBrush(QColor(verdict_tint(verdict)))
        for c, (_h, _s, key) in enumerate(self._cols):
            item = self.table.item(r, c)
            if item is None:
                continue
            item.setBackground(tint)
            if key == "verdict":
                item.setForeground(QBrush(QColor(verdict_text(verdict))))

    def _paint_parity_row(self, r: int) -> None:
        verdict = self.parity_verdicts[r]
        tint = QBrush(QColor(verdict_tint(verdict if verdict in ("match", "differs") else "no-gradient")))
        for c in range(self.parity.columnCount()):
            item = self.parity.item(r, c)
            if item is not None:
                item.setBackground(tint)

    def restyle(self) -> None:
        """The window switched colour scheme: every row's colours again."""
        for r in range(min(len(self.verdicts), self.table.rowCount())):
            self._paint_row(r)
        for r in range(min(len(self.parity_verdicts), self.parity.rowCount())):
            self._paint_parity_row(r)

    @staticmethod
    def _value(fw: str, tc, src: str, key: str):
        if src == "row":
            if key == "name":
                return tc.name
            if key == "framework":
                return fw
            if key == "shape":
                return "×".join(map(str, tc.shape)) or "scalar"
            if key == "tolerance":
                return str(tc.tolerance)
            if key == "verdict":
                return shown_verdict(tc)
            return getattr(tc, key, "")
        if src in MODES:
            st = tc.stats.get(src) or {}
            if not st:
                return None   # the mode gave nothing here (not run, an int input): not "0 NaN"
            if st.get("absent"):   # a mode that raised is an error; absent: it gave no gradient
                said = "cancelled" if st.get("cancelled") else "error" if st.get("raised") else "absent"
                return said if key == "min" else None
            if key == "nonfinite":
                return f"{st.get('nan', 0)}/{st.get('inf', 0)}" if (st.get("nan") or st.get("inf")) else "0"
            return st.get(key)
        m = tc.metrics.get(src) or {}
        return m.get(key)

    def set_parity(self, rows, note: str = "") -> None:
        """The torch-vs-tf rows (they may arrive after the table: computed off the GUI thread)."""
        p = self.parity
        heads = ["op", "tensor", "mode", "verdict", "max abs err", "note"]
        p.clear()
        p.setColumnCount(len(heads))
        p.setHorizontalHeaderLabels(heads)
        p.setRowCount(len(rows))
        self.parity_verdicts = [row.verdict for row in rows]
        for r, row in enumerate(rows):
            vals = [row.op, row.tensor, row.mode, row.verdict, fmt(row.max_abs_err), row.note]
            for c, v in enumerate(vals):
                item = QTableWidgetItem(str(v))
                item.setToolTip(str(v))             # a long note is cut at the cell's edge
                p.setItem(r, c, item)
            self._paint_parity_row(r)
        p.resizeColumnsToContents()
        p.horizontalHeader().setSectionResizeMode(len(heads) - 1, QHeaderView.Stretch)
        self.parity_label.setText(f"<b>torch ↔ tf parity</b> ({len(rows)} rows)" if rows else
                                  f"<b>torch ↔ tf parity</b>: {note}" if note else
                                  "<b>torch ↔ tf parity</b>: run the op in both frameworks")

    # --- lookup (tests, other views) -----------------------------------------------------------
    def value(self, tensor: str, framework: str, header: str):
        """The raw value shown in the cell of `header` for (tensor, framework)."""
        c = [h for h, _s, _k in self._cols].index(header)
        r = self.rows.index((tensor, framework))
        return self.table.item(r, c).data(Qt.UserRole)

    def text(self, tensor: str, framework: str, header: str) -> str:
        c = [h for h, _s, _k in self._cols].index(header)
        r = self.rows.index((tensor, framework))
        return self.table.item(r, c).text()

    def select(self, tensor: str, framework: Optional[str] = None) -> None:
        for r, (name, fw) in enumerate(self.rows):
            if name == tensor and (framework is None or fw == framework):
                self.table.selectRow(r)
                return

    def _selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows and rows[0].row() < len(self.rows):
            name = self.rows[rows[0].row()][0]
            if name:
                self.tensorSelected.emit(name)

    def _parity_selected(self) -> None:
        rows = self.parity.selectionModel().selectedRows()
        if rows:
            self.tensorSelected.emit(self.parity.item(rows[0].row(), 1).text())
