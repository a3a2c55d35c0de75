"""The op browser: loaded files, their ops with framework badges and file:line, a check box per
op (what Run runs), per-framework progress marks, and hand-made torch<->tf pairs.

Ops are grouped into *pairs* by name (the @gradviz.op name, or the Python name); selecting any
op shows its pair in the grid. A pair can be forced by hand when the names differ.
"""
from __future__ import annotations

import os
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (QInputDialog, QMenu, QTreeWidget, QTreeWidgetItem)

from gradviz.model import FileCatalog, OpInfo
from gradviz.qt.theme import FRAMEWORK_COLORS, PROGRESS_MARKS

OpKey = tuple  # (framework, file, qualname)

COL_NAME, COL_FW, COL_STATE, COL_WHERE = range(4)
ROLE_KEY = Qt.UserRole + 1


def op_key(op: OpInfo) -> OpKey:
    return (op.framework, op.file, op.qualname)


class OpTree(QTreeWidget):
    pairSelected = Signal(str)          # the pair name now shown
    checkedChanged = Signal()
    runRequested = Signal(object)       # list of OpKey (context menu "Run only this")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setColumnCount(4)
        self.setHeaderLabels(["file / op", "", "", "line"])
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        from PySide6.QtWidgets import QHeaderView
        head = self.header()
        head.setStretchLastSection(False)
        head.setSectionResizeMode(COL_NAME, QHeaderView.Stretch)
        for c in (COL_FW, COL_STATE, COL_WHERE):
            head.setSectionResizeMode(c, QHeaderView.ResizeToContents)
        self.setContextMenuPolicy(Qt.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.currentItemChanged.connect(self._current_changed)
        self.itemChanged.connect(self._item_changed)
        self.ops: dict[OpKey, OpInfo] = {}
        self.file_errors: dict[str, object] = {}   # file -> ErrorInfo
        self.files: list[str] = []
        self.pair_override: dict[OpKey, str] = {}
        self.progress: dict[OpKey, str] = {}
        self._items: dict[OpKey, QTreeWidgetItem] = {}
        self._unchecked: set[OpKey] = set()
        self._filling = False

    # --- data ----------------------------------------------------------------------------------
    def set_catalogs(self, catalogs: list[FileCatalog], files: tuple[str, ...] = ()) -> None:
        """Replace what is known about `files` (all files of the catalogs if not given)."""
        touched = list(dict.fromkeys([os.path.abspath(f) for f in files] + [c.file for c in catalogs]))
        self.ops = {k: v for k, v in self.ops.items() if k[1] not in touched}
        for f in touched:
            self.file_errors.pop(f, None)
            if f not in self.files:
                self.files.append(f)
        for cat in catalogs:
            if cat.error is not None:
                self.file_errors[cat.file] = cat.error
            for op in cat.ops:
                self.ops[op_key(op)] = op
        self._rebuild()

    def remove_file(self, path: str) -> None:
        self.files = [f for f in self.files if f != path]
        self.ops = {k: v for k, v in self.ops.items() if k[1] != path}
        self.file_errors.pop(path, None)
        self._rebuild()

    def pair_name(self, key: OpKey) -> str:
        op = self.ops.get(key)
        return self.pair_override.get(key) or (op.name if op else key[2])

    def pairs(self) -> dict[str, dict[str, OpInfo]]:
        """pair name -> {framework: OpInfo}. Two ops of one framework with the same name: the
        later file wins the slot (the earlier stays runnable on its own under file-qualified name)."""
        out: dict[str, dict[str, OpInfo]] = {}
        for key, op in self.ops.items():
            name = self.pair_name(key)
            slot = out.setdefault(name, {})
            if op.framework in slot:
                name = f"{name} ({os.path.basename(op.file)})"
                slot = out.setdefault(name, {})
            slot[op.framework] = op
        return out

    def checked_keys(self) -> list[OpKey]:
        return [k for k in self._ordered_keys() if k not in self._unchecked]

    def set_checked(self, keys) -> None:
        keys = set(keys)
        self._unchecked = {k for k in self.ops if k not in keys}
        self._rebuild()

    def current_pair(self) -> Optional[str]:
        item = self.currentItem()
        key = item.data(COL_NAME, ROLE_KEY) if item is not None else None
        return self.pair_name(tuple(key)) if key else None

    def select_pair(self, name: str) -> None:
        for key, item in self._items.items():
            if self.pair_name(key) == name:
                self.setCurrentItem(item)
                return

    def set_progress(self, key: OpKey, state: str) -> None:
        self.progress[key] = state
        item = self._items.get(key)
        if item is not None:
            self._paint_progress(item, key)

    def pair_with(self, a: OpKey, b: OpKey) -> None:
        """Show two ops of different frameworks as one op (names differ in the files)."""
        name = self.pair_name(a)
        self.pair_override[b] = name
        self._rebuild()
        self.select_pair(name)

    def unpair(self, key: OpKey) -> None:
        self.pair_override.pop(key, None)
        self._rebuild()

    # --- view ----------------------------------------------------------------------------------
    def _ordered_keys(self) -> list[OpKey]:
        order = {f: i for i, f in enumerate(self.files)}
        return sorted(self.ops, key=lambda k: (order.get(k[1], 1 << 30), self.ops[k].line, k[0]))

    def _rebuild(self) -> None:
        current = self.current_pair()
        self._filling = True
        self.clear()
        self._items.clear()
        bold = QFont()
        bold.setBold(True)
        for f in self.files:
            top = QTreeWidgetItem([os.path.basename(f), "", "", ""])
            top.setToolTip(COL_NAME, f)
            top.setFont(COL_NAME, bold)
            err = self.file_errors.get(f)
            if err is not None:
                top.setText(COL_STATE, "✗")
                top.setForeground(COL_NAME, QBrush(QColor("#9a0d0d")))
                msg = QTreeWidgetItem([f"{err.type}: {err.message.splitlines()[0] if err.message else ''}",
                                       "", "", err.where])
                msg.setForeground(COL_NAME, QBrush(QColor("#9a0d0d")))
                msg.setToolTip(COL_NAME, err.message)
                top.addChild(msg)
            self.addTopLevelItem(top)
            for key in self._ordered_keys():
                if key[1] != f:
                    continue
                op = self.ops[key]
                name = self.pair_name(key)
                label = op.qualname if name == op.qualname else f"{op.qualname}  → {name}"
                item = QTreeWidgetItem([label, op.framework, "", str(op.line)])
                item.setData(COL_NAME, ROLE_KEY, list(key))
                item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
                item.setCheckState(COL_NAME, Qt.Unchecked if key in self._unchecked else Qt.Checked)
                item.setToolTip(COL_NAME, f"{op.kind} · pairs as '{name}'\n{op.doc}".strip())
                item.setToolTip(COL_WHERE, op.where)
                item.setForeground(COL_FW, QBrush(QColor(FRAMEWORK_COLORS.get(op.framework, "#333"))))
                item.setFont(COL_FW, bold)
                self._paint_progress(item, key)
                top.addChild(item)
                self._items[key] = item
            top.setExpanded(True)
        self._filling = False
        if current:
            self.select_pair(current)
        elif self._items and self.currentItem() is None:
            self.setCurrentItem(next(iter(self._items.values())))

    def _paint_progress(self, item: QTreeWidgetItem, key: OpKey) -> None:
        state = self.progress.get(key, "")
        item.setText(COL_STATE, PROGRESS_MARKS.get(state, ""))
        item.setToolTip(COL_STATE, state)
        color = {"ok": "#1b6e1b", "error": "#9a0d0d", "running": "#1f4fa3"}.get(state, "#666")
        item.setForeground(COL_STATE, QBrush(QColor(color)))

    def _current_changed(self, item, _prev) -> None:
        key = item.data(COL_NAME, ROLE_KEY) if item is not None else None
        if key and not self._filling:
            self.pairSelected.emit(self.pair_name(tuple(key)))

    def _item_changed(self, item, column) -> None:
        if self._filling or column != COL_NAME:
            return
        key = item.data(COL_NAME, ROLE_KEY)
        if not key:
            return
        key = tuple(key)
        if item.checkState(COL_NAME) == Qt.Checked:
            self._unchecked.discard(key)
        else:
            self._unchecked.add(key)
        self.checkedChanged.emit()

    def _menu(self, pos) -> None:
        item = self.itemAt(pos)
        key = item.data(COL_NAME, ROLE_KEY) if item is not None else None
        if not key:
            return
        key = tuple(key)
        menu = QMenu(self)
        menu.addAction("Run only this op", lambda: self.runRequested.emit(
            [k for k in self.ops if self.pair_name(k) == self.pair_name(key)]))
        others = [k for k in self._ordered_keys() if k[0] != key[0]]
        if others:
            menu.addAction("Pair with…", lambda: self._ask_pair(key, others))
        if key in self.pair_override:
            menu.addAction("Undo pairing", lambda: self.unpair(key))
        menu.exec(self.viewport().mapToGlobal(pos))

    def _ask_pair(self, key: OpKey, others: list[OpKey]) -> None:
        labels = [f"{k[0]}: {k[2]}  ({os.path.basename(k[1])})" for k in others]
        choice, ok = QInputDialog.getItem(self, "Pair ops", f"Show {key[2]} ({key[0]}) together with:",
                                          labels, 0, False)
        if ok:
            self.pair_with(key, others[labels.index(choice)])
