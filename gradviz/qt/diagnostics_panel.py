"""Errors of user code (failed runs, modes that raised, files that did not load) and diagnostic
findings: one entry per problem (gradviz.app.problems), a detail pane with the message, the fix
and the user's file:line, "Open in editor", and a filter to the op shown in the grid. Clicking an
entry shows its detail, copies its location and selects its op and tensor in the window.
"""

from __future__ import annotations

import html
import os

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QTextOption
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gradviz.app.problems import Problem, problem_of, problems
from gradviz.qt.theme import severity_color

SEVERITY_MARKS = {"error": "✗", "warning": "!", "info": "i"}
ROLE_INDEX = Qt.UserRole + 1
COLUMN_SHARES = {1: 0.3, 3: 0.2}  # op, where: the most of the list's width each may take
MIN_COLUMN_W = 60


class DiagnosticsPanel(QWidget):
    copied = Signal(str)
    countChanged = Signal(int)
    problemSelected = Signal(object)  # the Problem clicked: the window shows its op and tensor

    def __init__(self, parent=None):
        super().__init__(parent)
        self.list = QTreeWidget()
        self.list.setColumnCount(4)
        self.list.setHeaderLabels(["", "op", "message", "where"])
        self.list.setRootIsDecorated(False)
        self.list.setAlternatingRowColors(True)
        self.list.setToolTip("click an entry: its detail, its op in the grid, its file:line copied")
        head = self.list.header()
        head.setStretchLastSection(False)
        # op and where are sized by _fit_columns (capped, elided): at 1000x700 a long op name
        # sized to its contents left the message column no room at all
        for c, mode in (
            (0, QHeaderView.ResizeToContents),
            (1, QHeaderView.Interactive),
            (2, QHeaderView.Stretch),
            (3, QHeaderView.Interactive),
        ):
            head.setSectionResizeMode(c, mode)
        self.list.viewport().installEventFilter(self)
        self.list.itemClicked.connect(lambda item, _c: self._clicked(item))
        self.list.currentItemChanged.connect(lambda item, _p: self._show_detail(item))
        self.detail = QTextBrowser()
        self.detail.setOpenLinks(False)
        self.detail.setPlaceholderText(
            "Click an entry."
        )  # its message, fix and file:line show here
        # a long path has no space to wrap at: break it anywhere, so file:line is in sight without
        # scrolling sideways at 1000x700; a traceback (<pre>) wraps too, else its widest line
        # made the whole pane, the "At:" line included, scroll sideways
        self.detail.setWordWrapMode(QTextOption.WrapAtWordBoundaryOrAnywhere)
        self.only_selected = QCheckBox("Only the selected op")
        self.only_selected.toggled.connect(lambda _on: self._filter_changed())
        self.open_button = QPushButton("Open in editor")
        self.open_button.setToolTip("$VISUAL or $EDITOR at the line, else the desktop's editor")
        self.open_button.clicked.connect(self.open_current)
        self.open_button.setEnabled(False)
        self.status = QLabel("")
        bar = QHBoxLayout()
        bar.setContentsMargins(2, 2, 2, 2)
        for w in (self.only_selected, self.status):
            bar.addWidget(w)
        bar.addStretch(1)
        bar.addWidget(self.open_button)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.list)
        split.addWidget(self.detail)
        split.setSizes([700, 400])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(bar)
        lay.addWidget(split, 1)
        self._entries: list[tuple[Problem, str]] = []  # (problem, its clearing tag), by index
        self._focus: set | None = None  # op keys of the selected op

    # --- entries -------------------------------------------------------------------------------
    def add_problem(self, p: Problem, tag: str = "") -> QTreeWidgetItem:
        path, _, line = p.where.rpartition(":")
        short = f"{os.path.basename(path)}:{line}" if path else p.where
        text = (f"[{p.code}] " if p.code else "") + (p.message.splitlines()[0] if p.message else "")
        item = QTreeWidgetItem([SEVERITY_MARKS.get(p.severity, "·"), p.op, text, short])
        item.setData(0, Qt.UserRole, tag)
        item.setData(0, ROLE_INDEX, len(self._entries))
        item.setData(3, Qt.UserRole, p.where)
        tip = p.message + (f"\n\nfix: {p.fix}" if p.fix else "")
        for c in range(4):
            item.setToolTip(c, tip)
        _paint(item, p.severity)
        self._entries.append((p, tag))
        self.list.addTopLevelItem(item)
        item.setHidden(not self._passes(p))
        if not item.isHidden():
            self.list.scrollToItem(item)  # a new entry is in sight, not below the fold
        self._count()
        return item

    def add(
        self, severity: str, op: str, message: str, where: str = "", detail: str = "", key: str = ""
    ) -> QTreeWidgetItem:
        return self.add_problem(Problem(severity, op, message, where=where, detail=detail), key)

    def add_error(self, op: str, err, key: str = "") -> QTreeWidgetItem:
        """err: gradviz.model.ErrorInfo."""
        return self.add("error", op, f"{err.type}: {err.message}", err.where, err.traceback, key)

    def add_finding(self, op: str, finding, key: str = "", run_key: tuple = ()) -> QTreeWidgetItem:
        """finding: gradviz.diagnostics.Finding."""
        return self.add_problem(problem_of(finding, op, run_key), key)

    def restyle(self) -> None:
        """The window switched colour scheme: the entries' colours again."""
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            _paint(item, self._entries[item.data(0, ROLE_INDEX)][0].severity)

    def clear_for(self, key_prefix: str | None = None) -> None:
        for i in reversed(range(self.list.topLevelItemCount())):
            if key_prefix is None or str(self.list.topLevelItem(i).data(0, Qt.UserRole)).startswith(
                key_prefix
            ):
                self.list.takeTopLevelItem(i)
        self._count()
        self._after_removal()

    def _after_removal(self) -> None:
        """Qt makes a neighbour of a removed current entry current: often another op's, which the
        pane then described while the user looked at this op (a re-run replaces its entries)."""
        if self._focus is not None:
            self._follow_selected_op()

    def clear_file(self, file: str) -> None:
        """Forget a removed file: its load errors and its ops' entries."""
        for i in reversed(range(self.list.topLevelItemCount())):
            item = self.list.topLevelItem(i)
            p, tag = self._entries[item.data(0, ROLE_INDEX)]
            if tag == f"load:{file}" or (p.key and p.key[1] == file):
                self.list.takeTopLevelItem(i)
        self._count()
        self._after_removal()

    def show_load(self, catalogs, files) -> bool:
        """The load errors of `files` (replacing earlier ones); True when there is one."""
        for f in files:
            self.clear_for(f"load:{f}")
        failed = False
        for note in dict.fromkeys((cat.file, n) for cat in catalogs for n in cat.notes):
            self.add("warning", os.path.basename(note[0]), note[1], key=f"load:{note[0]}")
        for cat in catalogs:
            if cat.error is not None:
                from gradviz.diagnostics import diagnose_load  # not needed for the first frame

                failed = True
                name = os.path.basename(cat.file) + (f" ({cat.framework})" if cat.framework else "")
                self.add_error(name, cat.error, key=f"load:{cat.file}")
                for f in diagnose_load(cat.error, cat.file, cat.framework):
                    self.add_finding(name, f, key=f"load:{cat.file}")
        return failed

    def show_result(self, key, analysis) -> None:
        """A result's problems, one entry each (a partial result: only a comparison bug)."""
        for p in problems(key, analysis):
            self.add_problem(p, f"run:{key}")
        if self.list.currentItem() is None and self._focus and tuple(key) in self._focus:
            self._follow_selected_op()  # the shown op's new entries: its first one

    # --- what is shown -------------------------------------------------------------------------
    def set_selected_op(self, keys) -> None:
        """The op the window shows (its keys, one per framework): the filter's choice. Another op
        selected: the detail pane follows it (called on every redraw, so only on a change)."""
        focus = set(map(tuple, keys))
        changed, self._focus = focus != self._focus, focus
        self._apply_filter()
        if changed:
            self._follow_selected_op()

    def _filter_changed(self) -> None:
        self._apply_filter()
        item = self.list.currentItem()
        if item is not None and item.isHidden():
            self._follow_selected_op()

    def _follow_selected_op(self) -> None:
        """Keep the entry shown if it is the selected op's, else show the op's first entry, else
        nothing ("Click an entry."): the pane must not describe an op the user has left."""
        p = self.current()
        focus = self._focus or set()
        item = self.list.currentItem()
        if p is not None and p.key and tuple(p.key) in focus and not item.isHidden():
            return
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            p = self._entries[item.data(0, ROLE_INDEX)][0]
            if not item.isHidden() and p.key and tuple(p.key) in focus:
                self.list.setCurrentItem(item)
                return
        self.list.setCurrentItem(None)
        self.list.clearSelection()
        self._show_detail(None)

    def entries(self) -> list[Problem]:
        """The problems listed now, top to bottom (hidden ones left out)."""
        out = []
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            if not item.isHidden():
                out.append(self._entries[item.data(0, ROLE_INDEX)][0])
        return out

    def messages(self) -> list[str]:
        return [
            self.list.topLevelItem(i).text(2)
            for i in range(self.list.topLevelItemCount())
            if not self.list.topLevelItem(i).isHidden()
        ]

    def item_for(self, where: str) -> QTreeWidgetItem | None:
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            if item.data(3, Qt.UserRole) == where and not item.isHidden():
                return item
        return None

    def _passes(self, p: Problem) -> bool:
        return not (
            self.only_selected.isChecked()
            and self._focus is not None
            and p.key
            and tuple(p.key) not in self._focus
        )

    def _apply_filter(self) -> None:
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            item.setHidden(not self._passes(self._entries[item.data(0, ROLE_INDEX)][0]))
        self._count()

    def _count(self) -> None:
        shown = sum(
            1
            for i in range(self.list.topLevelItemCount())
            if not self.list.topLevelItem(i).isHidden()
        )
        total = self.list.topLevelItemCount()
        self.status.setText(f"{shown} of {total}" if shown != total else "")
        self._fit_columns()
        self.countChanged.emit(total)

    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Resize and obj is self.list.viewport():
            self._fit_columns()
        return False

    def _fit_columns(self) -> None:
        """op and where as wide as their text, but at most a share of the list (longer text is
        elided; the detail pane has it whole), so the message column always has room."""
        avail = self.list.viewport().width()
        for column, share in COLUMN_SHARES.items():
            want = max(
                self.list.sizeHintForColumn(column), self.list.header().sectionSizeHint(column)
            )
            self.list.setColumnWidth(column, min(want, max(MIN_COLUMN_W, int(avail * share))))

    # --- one entry -----------------------------------------------------------------------------
    def current(self) -> Problem | None:
        item = self.list.currentItem()
        return self._entries[item.data(0, ROLE_INDEX)][0] if item is not None else None

    def _show_detail(self, item) -> None:
        p = self._entries[item.data(0, ROLE_INDEX)][0] if item is not None else None
        self.open_button.setEnabled(bool(p and p.where))
        if p is None:
            self.detail.clear()
            return
        parts = [
            f"<p><b>{html.escape(p.code or p.severity)}</b> · {html.escape(p.op)}</p>",
            f"<p>{html.escape(p.message)}</p>",
        ]
        if p.fix:
            parts.append(f"<p><b>Fix:</b> {html.escape(p.fix)}</p>")
        if p.where:
            parts.append(f"<p><b>At:</b> <code>{html.escape(p.where)}</code></p>")
        if p.detail:
            parts.append(f'<pre style="white-space: pre-wrap">{html.escape(p.detail)}</pre>')
        self.detail.setHtml("".join(parts))

    def _clicked(self, item) -> None:
        self._show_detail(item)
        p = self.current()
        if p is None:
            return
        text = p.where or item.text(2)
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(text)
        self.problemSelected.emit(p)

    def open_current(self) -> str | None:
        """Open the current entry's file at its line; returns why not, or None."""
        from gradviz.qt.open_editor import open_in_editor

        p = self.current()
        why = open_in_editor(p.where) if p is not None and p.where else "no file:line to open"
        self.status.setText(why or f"opened {os.path.basename(p.where)}")
        return why


def _paint(item: QTreeWidgetItem, severity: str) -> None:
    color = QBrush(QColor(severity_color(severity)))
    item.setForeground(0, color)
    item.setForeground(2, color)
