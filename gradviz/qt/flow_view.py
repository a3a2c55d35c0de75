"""The window's flow chart of a `stack` run: the flow figure description (gradviz.plots.flow)
drawn by gradviz.qt.export.flow at the widget's size, the same code that writes the exported files."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy, QSplitter, QWidget

from gradviz.plots.flow import FlowChart, FlowFigure
from gradviz.plots.ticks import fmt
from gradviz.qt.theme import figure_ink

PREFERRED_HEIGHT = 200  # px: where the window has room (1500x950), ~125 px of data
# the least it is given (grid_room.py): one line of title and legend, ~50 px of data; at 1000x700
# two whole grid rows leave it ~135
MIN_HEIGHT = 120


def layer_text(chart: FlowChart, layer: int) -> str:
    """ "PyTorch · op, layer 2 (h2): default 0.0123 · custom 0.0246": the norms of one layer as
    numbers, the readout under the mouse (a log axis cannot be read to three digits)."""
    parts = []
    for s in chart.series:
        norm = dict(zip(s.layers, s.norms)).get(layer)
        if norm is not None:
            parts.append(f"{s.mode} {fmt(norm)}")
        elif s.dies_at is not None and layer <= s.dies_at:
            # it dies on the way down from the loss: nothing reaches this layer
            parts.append(f"{s.mode} none (dies at layer {s.dies_at})")
        else:
            parts.append(f"{s.mode} none")  # zero, absent or not finite: the chart's note says
    return f"{chart.title}, layer {layer} (h{layer}): " + " · ".join(parts)


class FlowView(QWidget):
    """The flow chart, with the norms of the layer under the mouse in the legend's line (the
    readout names each mode it reads: it covers no data, axis label or title of a chart)."""

    appeared = Signal()  # shown for a stack run: the window makes room (grid_room.py)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.figure: FlowFigure | None = None
        self.setMinimumHeight(MIN_HEIGHT)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        self.setMouseTracking(True)
        self.readout = QLabel(self)
        self.readout.setStyleSheet("font-size: 11px; padding: 1px 4px")
        # opaque: it covers the legend while the mouse is over a layer
        self.readout.setAutoFillBackground(True)
        self.readout.hide()

    def text_at(self, x: float, y: float) -> str | None:
        """The readout for the point (x, y) of the widget: the norms of the layer nearest x in
        the chart under it, None outside every chart's plot."""
        if self.figure is None:
            return None
        from gradviz.qt.export.flow import flow_layout

        lay = flow_layout(self.figure, self.width(), self.height())
        for chart, plot in zip(self.figure.charts, lay.plots):
            if chart.depth < 1 or not (plot.x <= x <= plot.right and plot.y <= y <= plot.bottom):
                continue
            # the layers sit at 1..depth across the x range (0.5, depth + 0.5)
            layer = int(min(max(round(0.5 + (x - plot.x) / plot.w * chart.depth), 1), chart.depth))
            return layer_text(chart, layer)
        return None

    def mouseMoveEvent(self, ev):
        text = self.text_at(ev.position().x(), ev.position().y())
        if text is None:
            self.readout.hide()
        else:
            from gradviz.qt.export.flow import flow_layout, legend_line

            self.readout.setText(text)
            self.readout.adjustSize()
            line = legend_line(self.figure, flow_layout(self.figure, self.width(), self.height()))
            # wider than the legend's line: it takes the figure title's room too (the readout
            # starts with the hovered chart's title), never a chart's
            x = min(line.x, self.width() - self.readout.width() - 4)
            y = line.y + (line.h - self.readout.height()) / 2
            self.readout.move(int(max(x, 0)), int(max(y, 0)))
            self.readout.show()
        super().mouseMoveEvent(ev)

    def leaveEvent(self, ev):
        self.readout.hide()
        super().leaveEvent(ev)

    def set_figure(self, figure: FlowFigure | None) -> None:
        """Show `figure`; None hides the view (the shown op did not run the stack graph)."""
        if figure == self.figure:
            return
        self.figure = figure
        self.readout.hide()
        # a compact chart leaves its subtitle out (what was run, the norm drawn): said here
        self.setToolTip(figure.subtitle if figure is not None else "")
        appears = figure is not None and self.isHidden()
        self.setVisible(figure is not None)
        split = self.parentWidget()
        if appears and isinstance(split, QSplitter) and split.count() == 2:
            # as small as it reads: the rows below are what a stack run has many of (shown
            # again, the splitter gave it 330 of 620 px at 1500x950: one row and a bit left)
            total = sum(split.sizes())
            if total > PREFERRED_HEIGHT:
                split.setSizes([PREFERRED_HEIGHT, total - PREFERRED_HEIGHT])
        if appears:
            self.appeared.emit()
        self.update()

    def restyle(self) -> None:
        self.update()  # painted with the scheme's ink: see paintEvent

    def paintEvent(self, ev):
        if self.figure is None:
            return
        # imported here, not at start: the export package is not needed for the first frame
        from gradviz.qt.export.flow import paint_flow

        p = QPainter(self)
        try:
            paint_flow(p, self.figure, self.width(), self.height(), ink=figure_ink())
        finally:
            p.end()
