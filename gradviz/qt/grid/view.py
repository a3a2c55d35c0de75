"""The gradient grid: one row per tensor of the graph, one column per panel of the figure
description (gradviz.plots.figure), which also decides titles, colours, labels, notes and ranges,
so the grid shows what an export of it writes. Rows keep their own view and reuse their plots."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import QApplication, QLabel, QScrollArea, QVBoxLayout, QWidget

from gradviz.app.analysis import comparison_as_pair, result_as_pair
from gradviz.model import FRAMEWORKS, MODES, RunResult
from gradviz.plots import figure as F
from gradviz.plots.palette import FRAMEWORK_LABEL
from gradviz.qt.grid.pinned import PinnedHeader
from gradviz.qt.theme import mark_color, surface
from gradviz.vocab import ErrorKind

if TYPE_CHECKING:
    from gradviz.qt.grid.cell import Cell
    from gradviz.qt.grid.row import TensorRow

# The rows and their plots (row, cell, draw, links, readout) are pyqtgraph, imported when the first
# row is made: an empty grid needs none of it, so the window paints its first frame without the
# ~0.2 s pyqtgraph import, and qt/app.py imports them right after that frame (import_plots).


def import_plots() -> None:
    """Import the grid's pyqtgraph side now rather than when the first row is drawn."""
    from gradviz.qt.grid import draw, fill, links, readout, row  # noqa: F401


HEADER_STYLE = "font-size: 11px"


LEGEND_LINES = {"dash": "╌╌", "dot": "┈┈", "solid": "━━"}


def legend_html(fig_legend) -> str:
    parts = []
    for e in fig_legend:
        # each framework's line style as the plots draw it (JAX's dotted read as solid "━━")
        mark = "●" if e.marker == "dot" else LEGEND_LINES.get(e.dash, "━━")
        parts.append(f"<span style='color:{mark_color(e.color)}'>{mark}</span>&nbsp;{e.label}")
    return " &nbsp;&nbsp; ".join(parts)


class WheelScrolls(QObject):
    """Event filter for the plots' canvases: the wheel scrolls the grid (the main way around a
    grid of many rows); with Ctrl held it reaches pyqtgraph, which zooms the plot."""

    def __init__(self, bar, parent=None):
        super().__init__(parent)
        self.bar = bar

    def eventFilter(self, obj, ev):
        if (
            ev.type() == QEvent.Type.Wheel
            and not ev.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            QApplication.sendEvent(self.bar, ev)
            return True
        return False


class GridView(QScrollArea):
    """set_data(pair name, {framework: RunResult}, modes, {framework: OpComparison})."""

    tensorClicked = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        self._body = QWidget()
        self._lay = QVBoxLayout(self._body)
        self._lay.setContentsMargins(2, 2, 2, 2)
        self._lay.setSpacing(4)
        self.setWidget(self._body)
        self.rows: dict[str, TensorRow] = {}
        self.results: dict[str, RunResult] = {}
        self.comparisons: dict = {}
        self.series: dict = {}  # fw -> {(tensor, mode): Series} made off-thread
        self.modes: tuple = MODES
        self.pair = ""
        self.view_choice: dict[str, str] = {}  # tensor name -> view, kept across runs
        self.log_scale = False  # value-like views on a log10 |g| axis
        # hook(menu, tensor, framework, mode) adds entries to each plot's context menu (exports)
        self.plot_menu_hook = None
        self._wheel = WheelScrolls(self.verticalScrollBar(), self)
        self._described: list[RunResult] = []  # the results as the description names them
        self._readout_results: dict[str, RunResult] = {}
        self.against = None  # (label, {fw: RunResult}) of an earlier run
        self._row_desc: dict[str, F.Row] = {}
        self._curves: dict = {}
        self.header = QLabel()  # the figure's title, subtitle and legend
        self.header.setTextFormat(Qt.RichText)
        self.header.setWordWrap(True)
        self.header.setStyleSheet(HEADER_STYLE)
        self._head_box = PinnedHeader(self.header, self, 2)
        # rows and header stay put at the viewport's left while the plots scroll sideways
        self.horizontalScrollBar().valueChanged.connect(self._pin)
        self._placeholder = QLabel()
        self._placeholder.setAlignment(Qt.AlignCenter)
        self.restyle()
        self.show_message(
            "Load op files and press Run: every gradient of the selected op appears here."
        )

    # --- public --------------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self._clear()
        self._head_box.hide()
        self._placeholder.setText(text)
        self._placeholder.show()
        self._lay.addWidget(self._placeholder, 1)

    def message(self) -> str:
        """The message shown instead of rows, "" when rows are shown."""
        return "" if self._placeholder.isHidden() else self._placeholder.text()

    def set_data(
        self,
        pair: str,
        results: dict[str, RunResult],
        modes=MODES,
        comparisons=None,
        series=None,
        against=None,
    ) -> bool:
        """Show `results`; `series` ({fw: {(tensor, mode): Series}}) are values curves already
        decimated (gradviz.app.analysis). `against`: (label, {fw: RunResult}) of an earlier run,
        which the difference view subtracts (plots/against.py). Rows and plots of tensors shown
        before are reused, and the very same results as shown now are not drawn again: returns
        False then."""
        comparisons = dict(comparisons or {})
        if self._same(pair, results, modes, comparisons) and _same_against(against, self.against):
            return False
        self.against = against
        self.pair, self.results, self.modes = pair, dict(results), tuple(modes)
        self.comparisons = comparisons
        self.series = {fw: dict(v or {}) for fw, v in (series or {}).items()}
        if not results:
            self.show_message(f"{pair}: not run yet. Press Run.")
            return True
        self._described = [result_as_pair(results[fw], pair) for fw in _ordered(results)]
        if against is not None:
            from gradviz.plots.against import with_earlier

            self._described = with_earlier(self._described, against[1], against[0])
        # the readout reads the gradients drawn: the earlier run's too
        self._readout_results = {r.framework: r for r in self._described}
        self._curves = {(fw, t, m): s for fw, d in self.series.items() for (t, m), s in d.items()}
        descs = F.grid_rows(self._described, self._comparison_list())
        if not descs:
            errs = [
                f"{FRAMEWORK_LABEL.get(fw, fw)}: {r.error.one_line()}"
                for fw, r in results.items()
                if r.error is not None
            ]
            cancelled = all(
                r.error is not None and r.error.kind == ErrorKind.CANCELLED
                for r in results.values()
            )
            head = (
                f"{pair}: cancelled before it finished: nothing to draw (▶ Run runs it again)."
                if cancelled
                else f"{pair}: no tensors."
            )
            self.show_message(head + "\n" + "\n".join(errs))
            return True
        self._row_desc = {d.tensor: d for d in descs}
        self._placeholder.hide()
        keep = {
            name: row
            for name, row in self.rows.items()
            if name in self._row_desc and self._row_desc[name].role == row.role
        }
        for name, row in self.rows.items():
            if name not in keep:
                row.setParent(None)
                row.deleteLater()
        self.rows = {}
        while self._lay.count():  # widgets stay alive; only the order is redone
            item = self._lay.takeAt(0)
            w = item.widget()
            if (
                w is not None
                and w not in (self._placeholder, self._head_box)
                and w not in keep.values()
            ):
                w.deleteLater()
        self._lay.addWidget(self._head_box)
        self._head_box.show()
        for d in descs:
            row = keep.get(d.tensor)
            if row is None:
                from gradviz.qt.grid.readout import HoverReadout
                from gradviz.qt.grid.row import TensorRow

                row = TensorRow(d.tensor, d.role)
                row.viewChanged.connect(self._view_changed)
                row.clicked.connect(self.tensorClicked)
                row.fitRequested.connect(self.fit_row)
                row.canvas.viewport().installEventFilter(self._wheel)
                row.readout = HoverReadout(row, lambda: self._readout_results)
            row.set_views(F.views_for(d), self.view_choice.get(d.tensor, "values"))
            self.rows[d.tensor] = row
            row.pin(self.horizontalScrollBar().value())
            self._lay.addWidget(row)
            self._fill(row)
        self._lay.addStretch(1)
        self._show_header()
        return True

    def figure(self, tensor: str | None = None, panel=None) -> F.Figure:
        """The figure description of what the grid shows (each row in its view): what an export
        of the grid, a row (`tensor`) or one plot (`panel` = (framework, mode)) draws."""
        views = {name: row.view() for name, row in self.rows.items()}
        fig = F.build_figure(
            self._described,
            "values",
            self._comparison_list(),
            row_views=views,
            curves=self._curves,
            modes=self.modes,
            log_scale=self.log_scale,
            against=self.against_label(),
        )
        if tensor is None:
            return fig
        return F.select_row(fig, tensor) if panel is None else F.select_panel(fig, tensor, panel)

    def two_rows_height(self) -> int:
        """The grid's height with its header and two whole rows in view (qt/grid_room.py), and
        the horizontal scroll bar where the rows are wider than the grid (it took the second
        row's tick labels at 1000x700)."""
        from gradviz.qt.grid.row import ROW_HEIGHT

        m = self._lay.contentsMargins()
        # the header wraps: its height at the grid's width (its size hint is a narrow one's)
        head = self.header.heightForWidth(self.viewport().width() - 4)
        wide = max((r.minimumWidth() for r in self.rows.values()), default=0)
        bar = self.horizontalScrollBar()
        scrolls = wide + m.left() + m.right() > self.viewport().width() or bar.isVisible()
        return (
            max(head, 0)
            + 2 * ROW_HEIGHT
            + 2 * self._lay.spacing()
            + m.top()
            + m.bottom()
            + 2 * self.frameWidth()
            + (bar.sizeHint().height() if scrolls else 0)
        )

    def against_label(self) -> str | None:
        """The earlier run the difference view subtracts ("run 2 (14:31:05, differs)"), or None."""
        return self.against[0] if self.against is not None else None

    def fit_row(self, tensor: str) -> None:
        """Undo the user's zoom and pan in a row: the ranges of its figure description."""
        row = self.rows.get(tensor)
        if row is not None:
            from gradviz.qt.grid.links import fit

            fit(row.cells)

    def restyle(self) -> None:
        """The window switched colour scheme: its notes, headers and every plot drawn again (a
        plot kept for new data would keep the old scheme's notes)."""
        self._placeholder.setStyleSheet(f"color: {surface('muted')}; font-size: 15px")
        # set again: a label keeps the palette its style sheet was polished with (it stayed
        # dark text on the dark window after a live switch)
        self.header.setStyleSheet("")
        self.header.setStyleSheet(HEADER_STYLE)
        for row in self.rows.values():
            row.restyle()
            for slot in row.plots:
                slot.kind = None  # reset on the next fill
            self._fill(row)
        if self.rows:
            self._show_header()

    def set_log_scale(self, on: bool) -> None:
        """Values and difference views of every row on a log10 |g| axis (or back to linear)."""
        if bool(on) == self.log_scale:
            return
        self.log_scale = bool(on)
        for row in self.rows.values():
            self._fill(row)

    def set_view(self, tensor: str, view: str) -> None:
        row = self.rows[tensor]
        i = row.view_box.findData(view)
        if i < 0:
            raise ValueError(f"view {view!r} is not offered for {tensor}")
        row.view_box.setCurrentIndex(i)  # emits viewChanged -> redraw

    def highlight(self, tensor: str | None) -> None:
        for name, row in self.rows.items():
            row.set_highlight(name == tensor)
        if tensor in self.rows:
            self.ensureWidgetVisible(self.rows[tensor], 10, 10)

    def cells(self) -> list[Cell]:
        return [c for row in self.rows.values() for c in row.cells]

    def plot_count(self) -> int:
        return sum(1 for c in self.cells() if c.has_data)

    # --- building ------------------------------------------------------------------------------
    def _comparison_list(self) -> list:
        return [
            comparison_as_pair(c, self.pair) for c in self.comparisons.values() if c is not None
        ]

    def _same(self, pair, results, modes, comparisons) -> bool:
        """The same pair with the very same result and comparison objects as drawn now."""
        if not self.rows or pair != self.pair or tuple(modes) != self.modes:
            return False
        if list(results) != list(self.results) or list(comparisons) != list(self.comparisons):
            return False
        return all(results[k] is self.results[k] for k in results) and all(
            comparisons[k] is self.comparisons[k] for k in comparisons
        )

    def _clear(self) -> None:
        for row in self.rows.values():
            row.setParent(None)
            row.deleteLater()
        self.rows.clear()
        while self._lay.count():
            item = self._lay.takeAt(0)
            w = item.widget()
            if w is not None and w not in (self._placeholder, self._head_box):
                w.deleteLater()

    def _view_changed(self, tensor: str, view: str) -> None:
        self.view_choice[tensor] = view
        row = self.rows.get(tensor)
        if row is not None:
            self._fill(row)
            self._show_header()

    def _pin(self, offset: int) -> None:
        self._head_box.pin(offset)
        for row in self.rows.values():
            row.pin(offset)

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self._head_box.place()  # it wraps at the viewport's width, not the body's

    def _show_header(self) -> None:
        views = list(dict.fromkeys(row.view() for row in self.rows.values())) or ["values"]
        legend = []
        for v in views:
            for e in F.legend_for(
                F.grid_columns(self._described, v, self.modes, self.against_label()), v
            ):
                if e not in legend:
                    legend.append(e)
        self.header.setText(
            f"<b>{F.figure_title([self.pair], views)}</b> &nbsp; "
            f"<span style='color:{surface('muted')}'>{F.subtitle(self._described)}</span><br>"
            + legend_html(legend)
        )
        self._head_box.place()

    def _fill(self, row: TensorRow) -> None:
        from gradviz.qt.grid.fill import fill

        fill(self, row)


def _same_against(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return a[0] == b[0] and a[1].keys() == b[1].keys() and all(a[1][k] is b[1][k] for k in a[1])


def _ordered(results: dict) -> list[str]:
    return [fw for fw in FRAMEWORKS if fw in results] + [
        fw for fw in results if fw not in FRAMEWORKS
    ]
