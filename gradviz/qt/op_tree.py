"""The op browser, a view of the app state's loaded files (gradviz.app.loaded): files, their
ops with framework badges and file:line, a check box per op (what Run runs), a mark per op and
per file (queued, running, then the worst verdict, icon and colour; Δ when it changed since the
previous run, * when stale), a filter, and hand-made torch<->tf pairs. Selecting any op shows its
pair in the grid.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QHeaderView, QInputDialog, QMenu, QTreeWidget, QTreeWidgetItem

from gradviz.app.loaded import OpKey
from gradviz.app.state import AppState
from gradviz.qt.theme import framework_color, op_mark, severity_color, surface
from gradviz.verdict import PASSING, Verdict

COL_NAME, COL_FW, COL_STATE, COL_WHERE = range(4)
ROLE_KEY = Qt.UserRole + 1
# marks a finding is flagged on (!): a pass, or nothing checked to fail
PASSING_MARKS = ("ok", *PASSING, Verdict.UNCHECKED)
CHANGED = "Δ"  # after the mark: the verdict changed since the op's previous run


class OpTree(QTreeWidget):
    pairSelected = Signal(str)  # the pair name now shown
    runRequested = Signal(
        object
    )  # list of OpKey (context menus "Run only this op", "Run this file's ops")
    removeRequested = Signal(str)  # a file (context menu "Remove from the list")

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.loaded = state.loaded
        self.setColumnCount(4)
        self.setHeaderLabels(["file / op", "", "", "line"])
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        head = self.header()
        head.setStretchLastSection(False)
        head.setSectionResizeMode(COL_NAME, QHeaderView.Stretch)
        for c in (COL_FW, COL_STATE, COL_WHERE):
            head.setSectionResizeMode(c, QHeaderView.ResizeToContents)
        self.setContextMenuPolicy(Qt.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.currentItemChanged.connect(self._current_changed)
        self.itemChanged.connect(self._item_changed)
        self._items: dict[OpKey, QTreeWidgetItem] = {}
        self._filling = False
        self._filter = ""

    # --- what the window asks ------------------------------------------------------------------
    def current_pair(self) -> str | None:
        item = self.currentItem()
        key = item.data(COL_NAME, ROLE_KEY) if item is not None else None
        return self.loaded.pair_name(tuple(key)) if key else None

    def select_pair(self, name: str) -> None:
        for key, item in self._items.items():
            if self.loaded.pair_name(key) == name:
                self.setCurrentItem(item)
                return

    def select_file(self, path: str) -> None:
        """Make a file's line current (its ops, if any, are not shown by that)."""
        for i in range(self.topLevelItemCount()):
            if self.topLevelItem(i).toolTip(COL_NAME) == path:
                self.setCurrentItem(self.topLevelItem(i))
                return

    def _paint_op(self, item, key: OpKey) -> None:
        """An op's mark from what the state holds of it now."""
        self._paint_mark(
            item,
            self.state.op_mark(key),
            self._op_tip(key),
            self.state.is_stale(key),
            self._warning(key),
            self._changed(key),
        )

    def show_progress(self, key: OpKey) -> None:
        """Paint an op's mark again, and its file's (the worst of the file's ops)."""
        item = self._items.get(key)
        if item is not None:
            self._paint_op(item, key)
            if item.parent() is not None:
                self._paint_file(item.parent(), key[1])

    def shown_mark(self, key_or_file) -> tuple[str, str, str]:
        """(glyph, colour, tooltip) the mark column shows for an op key or a file path."""
        item = (
            self._items.get(key_or_file)
            if isinstance(key_or_file, tuple)
            else next(
                (
                    self.topLevelItem(i)
                    for i in range(self.topLevelItemCount())
                    if self.topLevelItem(i).toolTip(COL_NAME) == key_or_file
                ),
                None,
            )
        )
        if item is None:
            return ("", "", "")
        return (
            item.text(COL_STATE),
            item.foreground(COL_STATE).color().name(),
            item.toolTip(COL_STATE),
        )

    def set_filter(self, text: str) -> None:
        """Show only ops whose name, pair or file contains `text` (any case), and their files."""
        self._filter = text.strip().lower()
        self._apply_filter()

    def visible_keys(self) -> list[OpKey]:
        return [k for k, item in self._items.items() if not item.isHidden()]

    def _apply_filter(self) -> None:
        want = self._filter
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            file_hit = want in os.path.basename(top.toolTip(COL_NAME)).lower()
            shown = 0
            for j in range(top.childCount()):
                child = top.child(j)
                key = child.data(COL_NAME, ROLE_KEY)
                if not key:
                    continue  # a load error's line goes with its file
                key = tuple(key)
                hit = (
                    not want
                    or file_hit
                    or any(want in s.lower() for s in (key[2], self.loaded.pair_name(key)))
                )
                child.setHidden(not hit)
                shown += hit
            top.setHidden(bool(want) and not file_hit and not shown)

    def pair_with(self, a: OpKey, b: OpKey) -> None:
        """Show two ops of different frameworks as one op (names differ in the files)."""
        name = self.loaded.pair_with(a, b)
        self.refresh()
        self.select_pair(name)

    def unpair(self, key: OpKey) -> None:
        self.loaded.unpair(key)
        self.refresh()

    # --- view ----------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Draw the loaded files again (the current pair stays selected)."""
        current = self.current_pair()
        self._filling = True
        self.clear()
        self._items.clear()
        bold = QFont()
        bold.setBold(True)
        keys = self.loaded.ordered_keys()
        for f in self.loaded.files:
            top = QTreeWidgetItem([os.path.basename(f), "", "", ""])
            top.setToolTip(COL_NAME, f)
            top.setFont(COL_NAME, bold)
            err = self.loaded.errors.get(f)
            if err is not None:
                top.setForeground(COL_NAME, QBrush(QColor(surface("error"))))
                msg = QTreeWidgetItem(
                    [
                        f"{err.type}: {err.message.splitlines()[0] if err.message else ''}",
                        "",
                        "",
                        err.where,
                    ]
                )
                msg.setForeground(COL_NAME, QBrush(QColor(surface("error"))))
                msg.setToolTip(COL_NAME, err.message)
                top.addChild(msg)
            self.addTopLevelItem(top)
            for key in keys:
                if key[1] == f:
                    top.addChild(self._op_item(key, bold))
            self._paint_file(top, f)
            top.setExpanded(True)
        self._apply_filter()
        self._filling = False
        if current:
            self.select_pair(current)
        if self._items and self.currentItem() is None:
            self.setCurrentItem(next(iter(self._items.values())))

    def _op_item(self, key: OpKey, bold: QFont) -> QTreeWidgetItem:
        op = self.loaded.ops[key]
        name = self.loaded.pair_name(key)
        label = op.qualname if name == op.qualname else f"{op.qualname}  → {name}"
        # an imported op is shown at its own file's line, with that file's name
        where = str(op.line) if not op.defined_at else os.path.basename(op.where)
        item = QTreeWidgetItem([label, op.framework, "", where])
        item.setData(COL_NAME, ROLE_KEY, list(key))
        item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
        item.setCheckState(COL_NAME, Qt.Checked if self.loaded.is_checked(key) else Qt.Unchecked)
        # the whole name first: a narrow tree (1000x700) cuts the label
        item.setToolTip(
            COL_NAME, f"{op.qualname} ({op.kind}) · pairs as '{name}'\n{op.doc}".strip()
        )
        item.setToolTip(COL_WHERE, op.where)
        item.setForeground(COL_FW, QBrush(QColor(framework_color(op.framework))))
        item.setFont(COL_FW, bold)
        self._paint_op(item, key)
        self._items[key] = item
        return item

    def restyle(self) -> None:
        """The window switched colour scheme: every colour again."""
        self.refresh()

    def show_marks(self) -> None:
        """Paint every op's and file's mark again (the settings changed: stale marks)."""
        for key in self._items:
            self.show_progress(key)

    def _op_tip(self, key: OpKey) -> str:
        stale = "\nstale: the settings changed since this run" if self.state.is_stale(key) else ""
        severity, codes = self.state.op_warning(key)
        found = f"\nDiagnostics ({severity}): {', '.join(codes)}" if severity else ""
        change = self._changed(key)
        changed = f"\nΔ changed since the previous run: {change[0]} → {change[1]}" if change else ""
        return self._verdict_tip(key) + changed + found + stale

    def _changed(self, key: OpKey) -> tuple[str, str] | None:
        """(old, new) mark when the op's verdict changed since its previous run (not while it
        runs again: its mark says that)."""
        if self.state.op_mark(key) in ("queued", "running"):
            return None
        return self.state.history.change(key)

    def _warning(self, key: OpKey) -> str:
        """The severity to flag on a passing mark ("!" in that colour), else ""."""
        severity, _codes = self.state.op_warning(key)
        return severity if self.state.op_mark(key) in PASSING_MARKS else ""

    def _verdict_tip(self, key: OpKey) -> str:
        mark = self.state.op_mark(key)
        held = self.state.results.get(key)
        if held is None or held.comparison is None or mark in ("queued", "running"):
            return mark
        per_tensor = ", ".join(f"{t.name}: {t.verdict}" for t in held.comparison.tensors)
        failed = self.state.failed_checks(key)
        checks = f"\ncontract checks failed: {', '.join(failed)} (see Checks)" if failed else ""
        return f"worst: {mark}" + (f" ({per_tensor})" if per_tensor else "") + checks

    def _paint_file(self, item: QTreeWidgetItem, file: str) -> None:
        mark = self.state.file_mark(file)
        self._paint_mark(item, mark, f"worst of its ops: {mark}" if mark else "")

    @staticmethod
    def _paint_mark(
        item: QTreeWidgetItem,
        mark: str,
        tip: str,
        stale: bool = False,
        warning: str = "",
        changed=None,
    ) -> None:
        glyph, color = op_mark(mark)
        if warning and glyph:  # a match whose Diagnostics say otherwise
            glyph, color = glyph + "!", severity_color(warning)
        glyph += CHANGED if changed and glyph else ""
        item.setText(COL_STATE, glyph + ("*" if stale and glyph else ""))
        item.setToolTip(COL_STATE, tip)
        item.setForeground(COL_STATE, QBrush(QColor(color)))

    def _current_changed(self, item, _prev) -> None:
        key = item.data(COL_NAME, ROLE_KEY) if item is not None else None
        if key and not self._filling:
            self.pairSelected.emit(self.loaded.pair_name(tuple(key)))

    def _item_changed(self, item, column) -> None:
        key = item.data(COL_NAME, ROLE_KEY)
        if self._filling or column != COL_NAME or not key:
            return
        self.loaded.check(tuple(key), item.checkState(COL_NAME) == Qt.Checked)

    def _menu(self, pos) -> None:
        item = self.itemAt(pos)
        key = item.data(COL_NAME, ROLE_KEY) if item is not None else None
        if item is not None and item.parent() is None:  # a file
            path = item.toolTip(COL_NAME)
            menu = QMenu(self)
            keys = [k for k in self.loaded.ordered_keys() if k[1] == path]
            if keys:
                menu.addAction("Run this file's ops", lambda: self.runRequested.emit(keys))
            menu.addAction("Remove from the list", lambda: self.removeRequested.emit(path))
            menu.exec(self.viewport().mapToGlobal(pos))
            return
        if not key:
            return
        key = tuple(key)
        menu = QMenu(self)
        menu.addAction(
            "Run only this op",
            lambda: self.runRequested.emit(self.loaded.keys_of(self.loaded.pair_name(key))),
        )
        others = [k for k in self.loaded.ordered_keys() if k[0] != key[0]]
        if others:
            menu.addAction("Pair with…", lambda: self._ask_pair(key, others))
        if key in self.loaded.overrides:
            menu.addAction("Undo pairing", lambda: self.unpair(key))
        menu.exec(self.viewport().mapToGlobal(pos))

    def _ask_pair(self, key: OpKey, others: list[OpKey]) -> None:
        labels = [f"{k[0]}: {k[2]}  ({os.path.basename(k[1])})" for k in others]
        choice, ok = QInputDialog.getItem(
            self, "Pair ops", f"Show {key[2]} ({key[0]}) together with:", labels, 0, False
        )
        if ok:
            self.pair_with(key, others[labels.index(choice)])
