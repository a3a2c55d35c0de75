"""The numbers behind the grid: per tensor and framework the engine's verdict, per-mode stats and
pair metrics (from gradviz.compare), coloured by verdict; below, torch-vs-tf parity rows.
Selecting a row emits the tensor's name (the grid highlights its plots). Which columns show is
the user's choice (qt/numbers_columns.py: right-click the header). Rows sort by any column (worst
verdict first at the start), a filter keeps the rows with its words, and Ctrl+C copies the
selected rows with headers at full precision (qt/numbers_sort.py). With scope="run" the table is
the run's "Worst tensors": every op's tensors, an op column first.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gradviz.compare.torch_vs_tf import TORCH_TF
from gradviz.compare.verdicts import shown_verdict
from gradviz.model import FRAMEWORKS, MODES
from gradviz.qt.numbers_cells import cell_value, columns, fmt
from gradviz.qt.numbers_columns import ColumnChooser, header_label
from gradviz.qt.numbers_sort import (
    ROW_ROLE,
    SORT_ROLE,
    SortItem,
    TriageTable,
    row_matches,
    selected_text,
    sort_key,
    verdict_rank,
    worst_error,
)
from gradviz.qt.theme import verdict_text, verdict_tint


class NumbersTable(QWidget):
    tensorSelected = Signal(str)
    rowActivated = Signal(str, str, str)  # op, tensor, framework (double-click or Enter)
    copied = Signal(int)  # rows copied to the clipboard

    def __init__(
        self,
        qsettings: object | None = None,
        parent=None,
        scope: str = "pair",
        own_filter_line: bool = True,
    ):
        """`own_filter_line` False: the filter box is left for the owner to place (the window
        puts it beside the tabs, where it costs the grid no height)."""
        super().__init__(parent)
        self.scope = scope
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("filter rows: tensor, fw, verdict…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        if own_filter_line:
            lay.addWidget(self.filter)
        self.table = TriageTable()
        self.table.copyRequested.connect(self.copy_selected)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        # several rows at once: Ctrl+C copies them all (one cell at a time was no triage)
        self.table.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.itemSelectionChanged.connect(self._selected)
        self.table.itemActivated.connect(self._activated)
        copy = QAction("Copy selected rows (tab-separated, full precision)", self.table)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_selected)
        self.table.addAction(copy)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.copy_action = copy
        self.chooser = ColumnChooser(self.table, qsettings)  # right-click the header
        # worst verdict first (then the larger error) until the user clicks another header
        self._sort = ("verdict", Qt.SortOrder.DescendingOrder)
        self.table.horizontalHeader().sortIndicatorChanged.connect(self._sort_changed)
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
        if scope == "pair":
            split = QSplitter(Qt.Vertical)
            split.addWidget(self.table)
            split.addWidget(box)
            # half each: parity (do torch and tf agree?) got a quarter, two of its ~12 rows in sight
            split.setSizes([200, 200])
            lay.addWidget(split)
        else:  # the run's worst tensors: no parity pane
            box.hide()
            lay.addWidget(self.table)
        self.parity_verdicts: list[str] = []
        self._cols: list[tuple[str, str, str]] = []

    # --- rows as shown (sorting moves them) ----------------------------------------------------
    def _row_data(self, r: int) -> tuple:
        item = self.table.item(r, 0)
        data = item.data(ROW_ROLE) if item is not None else None
        return tuple(data) if data else ("", "", "", "")

    @property
    def rows(self) -> list[tuple[str, str]]:
        """(tensor, framework) per table row, in the order shown."""
        return [self._row_data(r)[1:3] for r in range(self.table.rowCount())]

    @property
    def keys(self) -> list[tuple[str, str, str]]:
        """(op, tensor, framework) per table row, in the order shown."""
        return [self._row_data(r)[:3] for r in range(self.table.rowCount())]

    @property
    def verdicts(self) -> list[str]:
        """The verdict of each table row (its colours), in the order shown."""
        return [self._row_data(r)[3] for r in range(self.table.rowCount())]

    # --- filling -------------------------------------------------------------------------------
    def set_data(
        self, comparisons: dict, parity_rows=(), modes=MODES, parity_note: str = ""
    ) -> None:
        """comparisons: {framework: OpComparison}; parity_rows: compare.parity(...) rows;
        parity_note: why there are no parity rows yet (they come later through set_parity)."""
        self._cols = columns(modes, with_op=self.scope == "run")
        self._fill([("", fw, comp) for fw, comp in comparisons.items()])
        self.set_parity(parity_rows, parity_note)

    def set_run(self, ops, modes=MODES) -> None:
        """ops: [(op name, framework, OpComparison or None)]: every tensor of the run in one
        table (scope "run"), worst first."""
        self._cols = columns(modes, with_op=True)
        self._fill(list(ops))

    def _fill(self, ops) -> None:
        t = self.table
        t.setUpdatesEnabled(False)
        t.blockSignals(True)
        t.setSortingEnabled(False)  # rows inserted sorted would land anywhere
        try:
            t.clear()
            t.setColumnCount(len(self._cols))
            t.setHorizontalHeaderLabels([header_label(h, src) for h, src, _k in self._cols])
            self.chooser.apply(self._cols)
            entries = self._entries(ops)
            t.setRowCount(len(entries))
            for r, (op, fw, tc, comp) in enumerate(entries):
                if tc is None:
                    self._row_error(r, op, fw, comp)
                else:
                    self._row(r, op, fw, tc)
                self._paint_row(r)
            self._sort_rows()
            # widths without room for a sort arrow in every header (~20 px each put the default
            # columns past a 1500 px window's edge); the sorted one's text may lose a letter
            t.horizontalHeader().setSortIndicatorShown(False)
            t.resizeColumnsToContents()
            t.horizontalHeader().setSortIndicatorShown(True)
            self._fit_sorted()
            for c, (_h, _s, key) in enumerate(self._cols):
                if key == "explanation":
                    t.setColumnWidth(c, 420)
        finally:
            t.blockSignals(False)
            t.setUpdatesEnabled(True)
        self._apply_filter()

    @staticmethod
    def _entries(ops) -> list[tuple]:
        """(op, fw, TensorComparison or None, comp): a tensor's frameworks side by side."""
        entries = []
        for op, fw, comp in ops:
            if comp is None:
                continue
            for tc in comp.tensors:
                entries.append((op, fw, tc, comp))
            if not comp.tensors and comp.error is not None:
                entries.append((op, fw, None, comp))
        order: dict[tuple, int] = {}
        for i, (op, _fw, tc, _c) in enumerate(entries):
            order.setdefault((op, tc.name if tc is not None else ""), i)
        entries.sort(key=lambda e: (order[(e[0], e[2].name if e[2] is not None else "")], e[1]))
        return entries

    def _row(self, r: int, op: str, fw: str, tc) -> None:
        verdict = shown_verdict(tc)
        for c, (_h, src, key) in enumerate(self._cols):
            value = op if key == "op" else cell_value(fw, tc, src, key)
            item = SortItem(fmt(value) if src != "row" or key in ("tolerance",) else str(value))
            item.setData(Qt.UserRole, value)
            item.setData(
                SORT_ROLE,
                sort_key(
                    value, (verdict_rank(verdict), worst_error(tc)) if key == "verdict" else None
                ),
            )
            if key == "verdict":
                f = item.font()
                f.setBold(True)
                item.setFont(f)
            if key == "explanation":
                item.setToolTip(str(value))
            if src in MODES and src in tc.stats and tc.stats[src].absent:
                item.setToolTip(tc.stats[src].reason or "no gradient")
            if c == 0:
                item.setData(ROW_ROLE, (op, tc.name, fw, verdict))
            self.table.setItem(r, c, item)

    def _row_error(self, r: int, op: str, fw: str, comp) -> None:
        for c, (_h, _src, key) in enumerate(self._cols):
            text = {
                "op": op,
                "name": "(run failed)",
                "framework": fw,
                "verdict": "error",
                "explanation": comp.error.one_line(),
            }.get(key, "")
            item = SortItem(text)
            item.setData(
                SORT_ROLE, (verdict_rank("error"), -1.0) if key == "verdict" else sort_key(text)
            )
            if c == 0:
                item.setData(ROW_ROLE, (op, "", fw, "error"))
            self.table.setItem(r, c, item)

    def _sort_rows(self) -> None:
        heads = [h for h, _s, _k in self._cols]
        header, order = self._sort
        if header not in heads:
            header, order = "verdict", Qt.SortOrder.DescendingOrder
        c = heads.index(header)
        self.table.horizontalHeader().setSortIndicator(c, order)
        self.table.setSortingEnabled(True)  # sorts by the indicator, and on header clicks
        self.table.sortItems(c, order)

    def _sort_changed(self, col: int, order) -> None:
        if 0 <= col < len(self._cols):
            self._sort = (self._cols[col][0], order)
            self._fit_sorted()

    def _fit_sorted(self) -> None:
        """The sorted column wide enough for its header and arrow ("verdict" read "erdic")."""
        h = self.table.horizontalHeader()
        c = h.sortIndicatorSection()
        if 0 <= c < self.table.columnCount() and self._cols[c][2] != "explanation":
            self.table.setColumnWidth(c, max(self.table.columnWidth(c), h.sectionSizeHint(c)))

    def sort_by(self, header: str, order=Qt.SortOrder.DescendingOrder) -> None:
        """As a click on that column's header (tests, scripts)."""
        self.table.sortItems([h for h, _s, _k in self._cols].index(header), order)

    # --- filter and copy -----------------------------------------------------------------------
    def _apply_filter(self) -> None:
        words = self.filter.text().lower().split()
        for r in range(self.table.rowCount()):
            self.table.setRowHidden(r, not row_matches(self.table, r, words))

    def shown_keys(self) -> list[tuple[str, str, str]]:
        """(op, tensor, framework) of the rows the filter lets through, in the order shown."""
        return [k for r, k in enumerate(self.keys) if not self.table.isRowHidden(r)]

    def copy_text(self) -> str:
        """The selected rows as Ctrl+C copies them."""
        return selected_text(self.table, [h for h, _s, _k in self._cols])

    def copy_selected(self) -> None:
        n = len(self.table.selectionModel().selectedRows())
        if n:
            QApplication.clipboard().setText(self.copy_text())
            self.copied.emit(n)

    def _paint_row(self, r: int) -> None:
        """A table row on its verdict's tint, the verdict cell in its verdict's colour."""
        verdict = self._row_data(r)[3]
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
        tint = QBrush(
            QColor(verdict_tint(verdict if verdict in ("match", "differs") else "no-gradient"))
        )
        for c in range(self.parity.columnCount()):
            item = self.parity.item(r, c)
            if item is not None:
                item.setBackground(tint)

    def restyle(self) -> None:
        """The window switched colour scheme: every row's colours again."""
        for r in range(self.table.rowCount()):
            self._paint_row(r)
        for r in range(min(len(self.parity_verdicts), self.parity.rowCount())):
            self._paint_parity_row(r)

    def set_parity(self, rows, note: str = "") -> None:
        """The shown pair's parity rows (they may arrive after the table: computed off the GUI
        thread); none, with `note` or a hint, where the op ran in one framework."""
        p = self.parity
        pairs = list(dict.fromkeys(tuple(row.frameworks) for row in rows))
        # a third framework's pairs name theirs; torch and tf alone keep the six columns
        named = pairs not in ([], [TORCH_TF])
        heads = ["op", "tensor", "mode", "verdict", "max abs err", "note"]
        heads = ["frameworks", *heads] if named else heads
        p.clear()
        p.setColumnCount(len(heads))
        p.setHorizontalHeaderLabels(heads)
        p.setRowCount(len(rows))
        self.parity_verdicts = [row.verdict for row in rows]
        for r, row in enumerate(rows):
            vals = [row.op, row.tensor, row.mode, row.verdict, fmt(row.max_abs_err), row.note]
            vals = [" ↔ ".join(row.frameworks), *vals] if named else vals
            for c, v in enumerate(vals):
                item = QTableWidgetItem(str(v))
                item.setToolTip(str(v))  # a long note is cut at the cell's edge
                p.setItem(r, c, item)
            self._paint_parity_row(r)
        p.resizeColumnsToContents()
        p.horizontalHeader().setSectionResizeMode(len(heads) - 1, QHeaderView.Stretch)
        if rows:  # unnamed rows are torch's and TF's
            title = "parity across frameworks" if named else "torch ↔ tf parity"
            self.parity_label.setText(f"<b>{title}</b> ({len(rows)} rows)")
            return
        # with JAX installed a pair may be any two of the three frameworks
        two = len(FRAMEWORKS) == 2
        title = "torch ↔ tf parity" if two else "parity across frameworks"
        wanted = "both frameworks" if two else "two or more frameworks"
        self.parity_label.setText(f"<b>{title}</b>: {note or f'run the op in {wanted}'}")

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

    def select(self, tensor: str, framework: str | None = None) -> None:
        for r, (name, fw) in enumerate(self.rows):
            if name == tensor and (framework is None or fw == framework):
                self.table.selectRow(r)
                return

    def _selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows and self.scope == "pair":
            name = self._row_data(min(i.row() for i in rows))[1]
            if name:
                self.tensorSelected.emit(name)

    def _activated(self, item) -> None:
        op, name, fw, _v = self._row_data(item.row())
        if name:
            self.rowActivated.emit(op, name, fw)

    def _parity_selected(self) -> None:
        rows = self.parity.selectionModel().selectedRows()
        if rows:
            heads = [
                self.parity.horizontalHeaderItem(c).text() for c in range(self.parity.columnCount())
            ]
            self.tensorSelected.emit(self.parity.item(rows[0].row(), heads.index("tensor")).text())
