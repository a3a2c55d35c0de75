"""Which of the Numbers table's ~27 columns show: a sensible default set (the verdict, how far
custom is from default and from numeric, each mode's range, the explanation), and the user's own
choice from the header's context menu (tick columns on and off, "Show all", "Default columns"),
remembered in the settings file as a plain string of the hidden columns' names. Only the view hides
them: the table holds every number, and the CSV / JSON exports write them all."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu, QTableWidget

from gradviz.app.settings_schema import Key

ALWAYS = ("tensor",)  # a row must say what it is about


def shown_by_default(source: str, key: str) -> bool:
    """(source, key) of numbers_table.columns(): hidden at first are the relative errors, default
    vs numeric (does autodiff agree with finite differences: rarely the question), each mode's
    mean and NaN/Inf counts (a non-finite verdict says how many) and the tolerance (~140 px;
    the explanation names it, and the counts of elements that differ apply it): at 1500x950
    the rest fits beside the op list."""
    if source == "row":
        return key != "tolerance"
    if "~" in source:
        return not source.startswith("default~") and key in ("max_abs_err", "n_differ")
    return key in ("min", "max")


def header_label(header: str, source: str) -> str:
    """The header as drawn: a pair's or a mode's name over the measure, on two lines (one line,
    "custom~numeric max abs err" made each column ~200 px wide for a 5-character number)."""
    return header.replace(" ", "\n", 1) if source != "row" else header


class ColumnChooser:
    def __init__(self, table: QTableWidget, qsettings: object | None = None):
        self.table = table
        self.qs = qsettings
        self.columns: list[tuple[str, str, str]] = []  # (header, source, key) shown in the table
        self.hidden: set[str] | None = self._load()  # None: the default set
        header = table.horizontalHeader()
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._menu)

    def _load(self) -> set[str] | None:
        raw = self.qs.value(Key.HIDDEN_COLUMNS, None) if self.qs is not None else None
        if raw is None:
            return None
        if isinstance(raw, (list, tuple)):  # a hand-edited `a, b` reads as a list
            raw = ",".join(str(r) for r in raw)
        return {n.strip() for n in str(raw).split(",") if n.strip()}

    def is_shown(self, header: str, source: str, key: str) -> bool:
        if header in ALWAYS:
            return True
        if self.hidden is None:
            return shown_by_default(source, key)
        return header not in self.hidden

    def shown(self) -> list[str]:
        """The headers shown now, in table order."""
        return [h for h, s, k in self.columns if self.is_shown(h, s, k)]

    def apply(self, columns) -> None:
        """The table's columns are `columns` (numbers_table.columns()): hide those not chosen."""
        self.columns = list(columns)
        for c, (h, s, k) in enumerate(self.columns):
            self.table.setColumnHidden(c, not self.is_shown(h, s, k))

    def set_shown(self, header: str, on: bool) -> None:
        hidden = (
            {h for h, s, k in self.columns if not self.is_shown(h, s, k)}
            if self.hidden is None
            else set(self.hidden)
        )
        (hidden.discard if on else hidden.add)(header)
        self._choose(hidden)

    def show_all(self) -> None:
        self._choose(set())

    def use_defaults(self) -> None:
        self.hidden = None
        if self.qs is not None:
            self.qs.remove(Key.HIDDEN_COLUMNS)
        self.apply(self.columns)

    def _choose(self, hidden: set[str]) -> None:
        self.hidden = hidden - set(ALWAYS)
        if self.qs is not None:
            self.qs.setValue(Key.HIDDEN_COLUMNS, ",".join(sorted(self.hidden)))
        self.apply(self.columns)

    def menu(self) -> QMenu:
        """The header's context menu: every column to tick on or off, Show all, Default columns."""
        menu = QMenu(self.table)
        menu.addAction("Show all", self.show_all)
        menu.addAction("Default columns", self.use_defaults)
        menu.addSeparator()
        for h, s, k in self.columns:
            act = menu.addAction(h)
            act.setCheckable(True)
            act.setChecked(self.is_shown(h, s, k))
            act.setEnabled(h not in ALWAYS)
            act.toggled.connect(lambda on, h=h: self.set_shown(h, on))
        return menu

    def _menu(self, pos) -> None:
        self.menu().exec(self.table.horizontalHeader().mapToGlobal(pos))
