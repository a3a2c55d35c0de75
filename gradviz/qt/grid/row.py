"""One row of the grid: a tensor's header (name, role and shape, verdicts, view choice) and its
cells, one plot per panel of the row's figure description."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gradviz.plots.description import VIEW_HELP, VIEW_NAMES, Row
from gradviz.qt.grid.cell import Cell, CellPlot, new_plot_item
from gradviz.qt.theme import surface, verdict_text, verdict_tint

# One height for every row, whatever it shows (a numeric column arriving does not move the rows
# below), small enough for three rows in the grid of a 1500x950 window.
ROW_HEIGHT = 180
HEADER_W = 150
# A plot narrower than this is unreadable: a row of many columns gets this much each and the grid
# scrolls sideways in a small window instead of cutting columns off.
MIN_CELL_W = 130
MIN_HEATMAP_W = 190  # a heatmap cell also holds its colour bar
PLOT_GAP = 2  # pixels between two plots of a framework
GROUP_GAP = 16  # and between two frameworks' column groups (torch | tf | jax)


class QuietCombo(QComboBox):
    """A combo box that leaves the wheel to the scrolling grid unless it has the focus (clicked
    or tabbed to): scrolling past a row must not switch its view."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.StrongFocus)

    def wheelEvent(self, ev):
        if self.hasFocus():
            super().wheelEvent(ev)
            return
        area = self.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is None:
            ev.ignore()
        else:  # said explicitly: Qt does not pass on a wheel event it was sent
            QApplication.sendEvent(area.verticalScrollBar(), ev)


def verdict_html(row: Row) -> str:
    return "<br>".join(
        f"<span style='background:{verdict_tint(v)}; "
        f"color:{verdict_text(v)}'>&nbsp;{fw}: {v}&nbsp;</span>"
        for fw, v in row.verdicts.items()
    )


class TensorRow(QFrame):
    viewChanged = Signal(str, str)  # tensor, view
    clicked = Signal(str)
    fitRequested = Signal(str)  # tensor: back to the ranges the figure description chose

    def __init__(self, name: str, role: str, parent=None):
        super().__init__(parent)
        self.name, self.role = name, role
        self.cells: list[Cell] = []
        self.plots: list[CellPlot] = []  # in layout order, kept across redraws
        # plots taken out of the layout when a view needs fewer columns: kept for the next wider
        # view, never deleted while the row lives (deleting one crashed the window, see retire)
        self.spare: list[CellPlot] = []
        self.used = 0  # plots of self.plots taken by the current fill
        self.highlighted = False
        self.desc = None  # the Row description its header shows
        self.groups: list[str] = []  # the framework of each column (set_groups)
        self.setFrameShape(QFrame.StyledPanel)
        self.setObjectName("tensorRow")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        head = self.head = QWidget()
        head.setFixedWidth(HEADER_W)
        hl = QVBoxLayout(head)
        hl.setContentsMargins(2, 2, 2, 2)
        hl.setSpacing(1)
        self.title = QLabel(f"<b>{name}</b>")
        self.title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.info = QLabel("")
        self.info.setWordWrap(True)
        self.verdicts = QLabel("")
        self.verdicts.setWordWrap(True)
        self.verdicts.setTextFormat(Qt.RichText)
        self.view_box = QuietCombo()
        self.view_box.setToolTip("how this tensor's gradients are drawn")
        self.fit_button = QToolButton()
        self.fit_button.setText("fit")
        self.fit_button.setToolTip("show all of this row's data again (after zooming)")
        self.fit_button.clicked.connect(lambda: self.fitRequested.emit(self.name))
        for w in (self.title, self.info, self.verdicts):
            hl.addWidget(w)
        hl.addStretch(1)
        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addWidget(self.view_box, 1)
        controls.addWidget(self.fit_button)
        hl.addLayout(controls)
        # the header is not in the layout but on top of its room, at the grid's horizontal scroll
        # offset (pin): it stays in view while the plots scroll under it, as a frozen column
        lay.addSpacing(HEADER_W)
        head.setParent(self)
        head.setObjectName("rowHead")
        head.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.offset = 0
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.canvas.ci.setSpacing(PLOT_GAP)
        self.canvas.ci.setContentsMargins(1, 1, 1, 1)
        # no pyqtgraph "Export…" in a plot's menu: its "Matplotlib Window" is broken and its
        # images are not what File ▸ Export draws (the window's own figure description)
        self.canvas.scene().contextMenu = []
        lay.addWidget(self.canvas, 1)
        self.setFixedHeight(ROW_HEIGHT)
        self.view_box.currentIndexChanged.connect(
            lambda _i: self.viewChanged.emit(self.name, self.view_box.currentData() or "values")
        )
        self.restyle()  # the header's colours and the (unhighlighted) frame
        head.raise_()

    def pin(self, offset: int) -> None:
        """Keep the header at the left of the grid's viewport, scrolled `offset` px sideways."""
        self.offset = max(int(offset), 0)
        self._place_head()

    def _place_head(self) -> None:
        m, r = self.layout().contentsMargins(), self.contentsRect()  # inside the frame's border
        left = r.left() + m.left()
        # never past the row's right end (a row narrower than the scrolled body)
        x = min(left + self.offset, max(r.right() + 1 - m.right() - HEADER_W, left))
        # scrolled, the panel reaches back to the viewport's edge (the row's margin and frame
        # would let a strip of plots show left of it); its contents stay where they were
        gap = max(min(x - left, x - (self.offset - self.x())), 0) if self.offset else 0
        self.head.layout().setContentsMargins(2 + gap, 2, 2, 2)
        self.head.setFixedWidth(HEADER_W + gap)
        top, h = r.top() + m.top(), r.height() - m.top() - m.bottom()
        self.head.setGeometry(x - gap, top, HEADER_W + gap, h)

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self._place_head()

    def mousePressEvent(self, ev):
        self.clicked.emit(self.name)
        super().mousePressEvent(ev)

    def set_views(self, views: list[str], current: str) -> None:
        self.view_box.blockSignals(True)
        self.view_box.clear()
        for i, v in enumerate(views):
            self.view_box.addItem(VIEW_NAMES[v], v)
            self.view_box.setItemData(i, VIEW_HELP[v], Qt.ItemDataRole.ToolTipRole)
        i = self.view_box.findData(current)
        self.view_box.setCurrentIndex(i if i >= 0 else 0)
        self.view_box.blockSignals(False)

    def view(self) -> str:
        return self.view_box.currentData() or "values"

    def set_highlight(self, on: bool) -> None:
        self.highlighted = on
        # the header is opaque: plots scrolled sideways pass under it
        self.setStyleSheet(
            f"#tensorRow {{ border: 3px solid {surface('row_focus')}; "
            f"background: {surface('row_focus_fill')}; }} "
            f"#rowHead {{ background: {surface('row_focus_fill')}; }}"
            if on
            else f"#tensorRow {{ border: 1px solid {surface('row_border')}; }} "
            "#rowHead { background: palette(window); }"
        )

    def restyle(self) -> None:
        """Header colours for the scheme the window shows (the plots are drawn again by the grid)."""
        self.info.setStyleSheet(f"color: {surface('muted')}; font-size: 11px")
        self.set_highlight(self.highlighted)
        if self.desc is not None:
            self.show_header(self.desc)

    def show_header(self, row: Row) -> None:
        """The row's label (as the export writes it after the name), verdicts and explanations."""
        self.desc = row
        self.info.setText(row.label.split(" · ", 1)[1] if " · " in row.label else row.label)
        self.verdicts.setText(verdict_html(row))
        # on the header only: set on the row, a ~1190 px tooltip covered the plots and the
        # hover readout of whatever the mouse rested on (issue 28, item 2)
        self.head.setToolTip(
            "\n".join(
                f"{fw}: {row.verdicts.get(fw, '')} — {why}" for fw, why in row.explanations.items()
            )
        )
        worst = next(
            (v for v in ("error", "non-finite", "broken", "differs") if v in row.verdicts.values()),
            None,
        )
        self.title.setStyleSheet(f"color: {verdict_text(worst)}" if worst else "")

    # --- plots -----------------------------------------------------------------------------------
    def plot(self, col: int, kind=None) -> CellPlot:
        """The plot of column `col`: the one drawn there last time (kept as it is when it showed
        the same `kind` of drawing, which then only gets new data; else emptied), or a new one."""
        self.used = col + 1
        if col < len(self.plots):
            slot = self.plots[col]
            if kind is None or slot.kind != kind:
                slot.reset()
            else:
                slot.wait(False)
        elif self.spare:
            slot = self.spare.pop()
            self.canvas.addItem(slot.item, row=0, col=col)
            self.plots.append(slot)
        else:
            slot = CellPlot(new_plot_item(self.canvas, col))
            # a plot's axes take their width when their tick labels are first painted: the row
            # then asks for what its plots really need (see fit_width)
            slot.item.geometryChanged.connect(self.fit_width)
            self.plots.append(slot)
        slot.kind = kind
        return slot

    def retire_unused(self) -> None:
        """Plots beyond the columns of this fill leave the layout; the row asks for the width
        its columns need."""
        for slot in self.plots[self.used :]:
            self.retire(slot)
        del self.plots[self.used :]
        self.fit_width()

    def fit_width(self) -> None:
        """The row's minimum width: its plots' own minimum widths (axes, tick labels, title),
        and at least MIN_CELL_W each. Below what its plots need the canvas cut the last column
        off with no scroll bar to reach it (round_ste's output row at 1000x700)."""
        each = MIN_HEATMAP_W if self.view() == "heatmap" else MIN_CELL_W
        used = self.plots[: self.used]
        ci = self.canvas.ci
        need = sum(slot.item.effectiveSizeHint(Qt.SizeHint.MinimumSize).width() for slot in used)
        need += sum(ci.layout.columnSpacing(col) for col in range(len(used) - 1)) + 4
        width = HEADER_W + 16 + int(max(self.used * each, need) + 0.999)
        if width != self.minimumWidth():
            self.setMinimumWidth(width)

    def set_groups(self, frameworks: list[str]) -> None:
        """A wider gap after the last column of each framework: the row's columns read as one
        group per framework (one, two or three of them)."""
        lay = self.canvas.ci.layout
        for col in range(len(frameworks) - 1):
            gap = GROUP_GAP if frameworks[col + 1] != frameworks[col] else PLOT_GAP
            if lay.columnSpacing(col) != gap:
                lay.setColumnSpacing(col, gap)
        self.groups = list(frameworks)

    def retire(self, slot: CellPlot) -> None:
        """Take a plot out of the layout and keep it in self.spare for reuse. Freeing a removed
        PlotItem (at once, or one event-loop pass later) made Qt crash while painting the row's
        scene (QGraphicsScene drawSubtreeRecursive via GraphicsView.paintEvent, issue 11 item 15);
        kept alive it never did. Plots are freed only with their row, by Qt, all at once."""
        slot.reset()
        self.canvas.removeItem(slot.item)
        self.spare.append(slot)
