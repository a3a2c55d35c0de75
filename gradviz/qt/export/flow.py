"""Draw a flow figure (gradviz.plots.flow.FlowFigure) with one QPainter routine: into the
window's flow view at its size, or to PNG / SVG / PDF at a fixed size. Same description, same
drawing code: what the window shows is what the file holds.

Public:
    flow_layout(fig, width, height) -> FlowLayout     where each chart's plot area is
    paint_flow(qpainter, fig, width, height)          draw at that size (logical units)
    render_flow_image(fig, width=None, height=None, scale=2) -> QImage
    save_flow_figure(fig, path, scale=2)              format from the suffix, written atomically
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gradviz.plots import flow as FL
from gradviz.plots.palette import FIGURE_INK
from gradviz.qt.export.files import write_painted
from gradviz.qt.export.layout import (
    GAP_X,
    LEGEND_H,
    LEGEND_PX,
    MARGIN,
    PANEL_TITLE_H,
    SUBTITLE_H,
    TITLE_H,
    Rect,
    fmt,
    nice_ticks,
    text_w,
    value_to_px,
)
from gradviz.qt.export.painter import Painter
from gradviz.qt.export.png import white_image

CHART_W, CHART_H = 460, 330  # one chart of an exported figure
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 58, 12, 6, 46
NOTE_H = 14
DEAD_MARK = 4.0  # half size of the death cross
# Below this height (the window's flow view between its grid rows) the figure is drawn compact:
# title and legend share one line, the subtitle goes (the view's tooltip says it), the x label
# and a chart's note share the line under the ticks; a 200 px view kept 35 px of data otherwise.
COMPACT_BELOW = 300
COMPACT_TOP, COMPACT_HEAD_H, COMPACT_TITLE_H, COMPACT_TICKS_H, COMPACT_LINE_H = 4, 20, 16, 15, 14
# A compact chart's ~55 px of data cut the rotated y label: it goes level, in the title line
# left of the plot, as the first of these that fits there (the view's tooltip says the rest)
COMPACT_YLABELS = ("‖∂loss/∂h‖₂", "‖∂L/∂h‖₂", "‖g‖")
YLABEL_PX = 9.5


@dataclass(frozen=True)
class FlowLayout:
    width: float
    height: float
    charts: tuple[Rect, ...]  # whole chart, title included
    plots: tuple[Rect, ...]  # data area
    compact: bool = False  # see COMPACT_BELOW


def export_size(fig: FL.FlowFigure) -> tuple[int, int]:
    n = max(len(fig.charts), 1)
    width = 2 * MARGIN + n * CHART_W + (n - 1) * GAP_X
    return int(width), int(MARGIN + TITLE_H + SUBTITLE_H + LEGEND_H + CHART_H + MARGIN)


def flow_layout(fig: FL.FlowFigure, width: float, height: float) -> FlowLayout:
    n = max(len(fig.charts), 1)
    if height < COMPACT_BELOW:
        return _compact_layout(fig, width, height, n)
    top = MARGIN + TITLE_H + SUBTITLE_H + LEGEND_H
    cw = max((width - 2 * MARGIN - (n - 1) * GAP_X) / n, 120.0)
    ch = max(height - top - MARGIN, 120.0)
    charts, plots = [], []
    for j in range(len(fig.charts)):
        x = MARGIN + j * (cw + GAP_X)
        charts.append(Rect(x, top, cw, ch))
        py = top + PANEL_TITLE_H + PLOT_TOP
        plots.append(
            Rect(
                x + PLOT_LEFT, py, cw - PLOT_LEFT - PLOT_RIGHT, top + ch - PLOT_BOTTOM - NOTE_H - py
            )
        )
    return FlowLayout(width, height, tuple(charts), tuple(plots))


def _compact_layout(fig: FL.FlowFigure, width: float, height: float, n: int) -> FlowLayout:
    top = COMPACT_TOP + COMPACT_HEAD_H
    cw = max((width - 2 * MARGIN - (n - 1) * GAP_X) / n, 120.0)
    ch = max(height - top - 2, 60.0)
    bottom = COMPACT_TICKS_H + COMPACT_LINE_H + 2
    charts, plots = [], []
    for j in range(len(fig.charts)):
        x = MARGIN + j * (cw + GAP_X)
        charts.append(Rect(x, top, cw, ch))
        py = top + COMPACT_TITLE_H
        plots.append(
            Rect(x + PLOT_LEFT, py, cw - PLOT_LEFT - PLOT_RIGHT, max(top + ch - bottom - py, 10.0))
        )
    return FlowLayout(width, height, tuple(charts), tuple(plots), compact=True)


def compact_title(fig: FL.FlowFigure, width: float) -> tuple[float, float]:
    """The compact title's font size and width: the legend follows it on the same line."""
    room = width - 2 * MARGIN
    px = 12.5
    while px > 10 and text_w(fig.title, px, True) > room / 2:
        px -= 0.5
    return px, min(text_w(fig.title, px, True), room)


def legend_line(fig: FL.FlowFigure, lay: FlowLayout) -> Rect:
    """The legend's line (after the title in a compact figure): where the window's hover
    readout goes, as it names each mode it reads; under the charts it covered the x label."""
    if lay.compact:
        x = MARGIN + compact_title(fig, lay.width)[1] + 16
        return Rect(x, 0, max(lay.width - MARGIN - x, 0), COMPACT_TOP + COMPACT_HEAD_H)
    return Rect(MARGIN, MARGIN + TITLE_H + SUBTITLE_H, lay.width - 2 * MARGIN, LEGEND_H)


def y_label(chart: FL.FlowChart, box: Rect, plot: Rect, compact: bool) -> tuple[str, Rect, bool]:
    """(text, rect, rotated): the y label and its room; a rotated one's rect is the strip left
    of the plot, its text runs along the rect's height."""
    if not compact:
        return chart.ylabel, Rect(box.x + 1, plot.y, 16, plot.h), True
    # clear of the top decade's tick label, which reaches ~7 px above the plot
    room = Rect(box.x, box.y - 2, plot.x - box.x - 4, COMPACT_TITLE_H - 5)
    fits = [s for s in COMPACT_YLABELS if text_w(s, YLABEL_PX) <= room.w]
    return (fits[0] if fits else COMPACT_YLABELS[-1]), room, False


def layer_ticks(depth: int) -> list[int]:
    if depth <= 16:
        return list(range(1, depth + 1))
    return sorted({1, depth} | {int(t) for t in nice_ticks(1, depth, target=6) if t >= 1})


class _FlowPainter(Painter):
    def __init__(self, painter, raster: bool = False, ink=None):
        super().__init__(painter, raster)
        self.ink = ink or FIGURE_INK["light"]

    def text(self, x, y, w, h, s: str, align: str = "left", color=None, elide=True):
        super().text(x, y, w, h, s, align, color or self.ink["text"], elide)

    def draw_flow(self, fig: FL.FlowFigure, lay: FlowLayout) -> None:
        QtCore, QtGui, ink = self.QtCore, self.QtGui, self.ink
        self.p.fillRect(QtCore.QRectF(0, 0, lay.width, lay.height), QtGui.QColor(ink["background"]))
        if lay.compact:
            self._compact_head(fig, lay)
            for chart, box, plot in zip(fig.charts, lay.charts, lay.plots):
                self._chart(chart, box, plot, compact=True)
            return
        room = lay.width - 2 * MARGIN
        px = 15.0
        while px > 10 and text_w(fig.title, px, True) > room:
            px -= 0.5
        self.font(px, bold=True)
        self.text(MARGIN, MARGIN, room, TITLE_H, fig.title)
        self.font(10.5)
        self.text(MARGIN, MARGIN + TITLE_H, room, SUBTITLE_H, fig.subtitle, color=ink["subtitle"])
        self._flow_legend(fig, MARGIN + TITLE_H + SUBTITLE_H)
        for chart, box, plot in zip(fig.charts, lay.charts, lay.plots):
            self._chart(chart, box, plot)

    def _compact_head(self, fig: FL.FlowFigure, lay: FlowLayout) -> None:
        """The title, whole, then the legend on the same line: its last entry, the death cross,
        elided to the room left (the charts' crosses say where)."""
        room = lay.width - 2 * MARGIN
        px, title_w = compact_title(fig, lay.width)
        self.font(px, bold=True)
        self.text(MARGIN, COMPACT_TOP, title_w + 1, COMPACT_HEAD_H - 4, fig.title)
        self._flow_legend(fig, COMPACT_TOP - 4, x0=MARGIN + title_w + 16, right=MARGIN + room)

    def _flow_legend(
        self, fig: FL.FlowFigure, y: float, x0: float = MARGIN, right: float | None = None
    ) -> None:
        QtCore = self.QtCore
        self.font(LEGEND_PX)
        x = float(x0)
        for e in fig.legend:
            width, _, radius = FL.MODE_STYLE.get(e.label, (2.0, e.dash, 3.0))
            self.pen(e.color, width, e.dash)
            self.p.drawLine(QtCore.QPointF(x, y + 12), QtCore.QPointF(x + 26, y + 12))
            self._dot(x + 13, y + 12, e.color, radius)
            self.text(x + 31, y, 200, 24, e.label, elide=False)
            x += 31 + self.text_width(e.label) + 18
        self._cross(x + 5, y + 12, self.ink["mark"])
        if right is None:
            self.text(x + 14, y, 400, 24, FL.DEAD_LABEL, color=self.ink["label"], elide=False)
        elif right - x - 14 > 40:
            self.text(x + 14, y, right - x - 14, 24, FL.DEAD_LABEL, color=self.ink["label"])

    def _dot(self, x: float, y: float, color: str, radius: float = 3.0) -> None:
        self.pen(color, 1.0)
        self.brush(color)
        self.p.drawEllipse(self.QtCore.QPointF(x, y), radius, radius)
        self.no_brush()

    def _cross(self, x: float, y: float, color: str) -> None:
        QtCore, d = self.QtCore, DEAD_MARK
        self.pen(color, 2.0)
        self.p.drawLine(QtCore.QPointF(x - d, y - d), QtCore.QPointF(x + d, y + d))
        self.p.drawLine(QtCore.QPointF(x - d, y + d), QtCore.QPointF(x + d, y - d))

    def _chart(self, chart: FL.FlowChart, box: Rect, plot: Rect, compact: bool = False) -> None:
        QtCore = self.QtCore
        self.font(11, bold=True)
        self.text(plot.x, box.y, plot.w, COMPACT_TITLE_H if compact else PANEL_TITLE_H, chart.title)
        self.pen(self.ink["frame"], 0.8)
        self.no_brush()
        self.p.drawRect(QtCore.QRectF(plot.x, plot.y, plot.w, plot.h))
        if compact:  # one line under the ticks: the x label, then the chart's note
            self.font(10)
            line = chart.xlabel + (f" · {chart.note}" if chart.note else "")
            self.text(box.x, plot.bottom + COMPACT_TICKS_H, box.w, COMPACT_LINE_H, line, "center")
        else:
            self.font(10.5)
            self.text(plot.x, plot.bottom + 18, plot.w, 14, chart.xlabel, "center")
        text, at, rotated = y_label(chart, box, plot, compact)
        if rotated:
            self.p.save()
            self.p.translate(at.x + at.w / 2, at.y + at.h / 2)
            self.p.rotate(-90)
            self.text(-at.h / 2, -at.w / 2, at.h, at.w, text, "center")
            self.p.restore()
        else:
            self.font(YLABEL_PX)
            self.text(at.x, at.y, at.w, at.h, text, "right", elide=False)
        if chart.note and not compact:
            self.font(9, italic=True)
            self.text(
                box.x, plot.bottom + 32, box.w, NOTE_H, chart.note, "center", self.ink["note"]
            )
        if chart.empty or chart.depth < 1:
            self.font(11, italic=True)
            self.pen(self.ink["empty"])
            self.p.drawText(
                QtCore.QRectF(plot.x + 8, plot.y + 8, plot.w - 16, plot.h - 16),
                int(QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap),
                chart.note or "nothing to draw",
            )
            return
        xr = (0.5, chart.depth + 0.5)
        lo, hi = chart.decades
        self._flow_axes(plot, xr, (lo, hi), chart.depth)
        self.p.save()
        self.p.setClipRect(QtCore.QRectF(plot.x, plot.y, plot.w, plot.h))
        for s in chart.series:
            self._flow_series(s, plot, xr, (lo, hi))
        self.p.restore()
        stacked = 0
        for s in chart.series:
            if s.dies_at is None:
                continue
            x = float(value_to_px(s.dies_at, xr[0], xr[1], plot.x, plot.right))
            self.pen(s.color, 1.0, "dash")
            self.p.drawLine(QtCore.QPointF(x, plot.y), QtCore.QPointF(x, plot.bottom))
            self._cross(x, plot.bottom - 8 - 11 * stacked, s.color)
            stacked += 1

    def _flow_axes(self, plot: Rect, xr, decades, depth: int) -> None:
        QtCore = self.QtCore
        lo, hi = decades
        self.font(9.5)
        step = max(1, math.ceil((hi - lo) / 8))  # at most ~8 labelled decades
        for k in range(lo, hi + 1):
            y = float(value_to_px(k, lo, hi, plot.bottom, plot.y))
            self.pen(self.ink["grid"], 0.6)
            self.p.drawLine(QtCore.QPointF(plot.x, y), QtCore.QPointF(plot.right, y))
            if (k - lo) % step == 0:
                self.text(
                    plot.x - 50,
                    y - 7,
                    46,
                    14,
                    fmt(10.0**k),
                    "right",
                    self.ink["ticks"],
                    elide=False,
                )
        for t in layer_ticks(depth):
            x = float(value_to_px(t, xr[0], xr[1], plot.x, plot.right))
            self.pen(self.ink["frame"], 0.8)
            self.p.drawLine(QtCore.QPointF(x, plot.bottom), QtCore.QPointF(x, plot.bottom + 3))
            self.text(
                x - 20, plot.bottom + 3, 40, 14, str(t), "center", self.ink["ticks"], elide=False
            )

    def _flow_series(self, s: FL.FlowSeries, plot: Rect, xr, decades) -> None:
        if not s.layers:
            return
        xs = value_to_px(s.layers, xr[0], xr[1], plot.x, plot.right)
        ys = value_to_px(
            [math.log10(n) for n in s.norms], decades[0], decades[1], plot.bottom, plot.y
        )
        # a line only between neighbouring layers: a layer without a norm breaks it
        start = 0
        for k in range(1, len(s.layers) + 1):
            if k == len(s.layers) or s.layers[k] != s.layers[k - 1] + 1:
                if k - start > 1:
                    self.pen(s.color, s.width, s.dash)
                    self.no_brush()
                    self.polyline(xs[start:k], ys[start:k])
                start = k
        if len(s.layers) <= 80:
            for a, b in zip(xs, ys):
                self._dot(float(a), float(b), s.color, s.radius)


def paint_flow(
    painter, fig: FL.FlowFigure, width: float, height: float, raster: bool = True, ink=None
) -> None:
    """`ink`: the colours (a FIGURE_INK entry); files always get the light one."""
    _FlowPainter(painter, raster=raster, ink=ink).draw_flow(fig, flow_layout(fig, width, height))


def render_flow_image(
    fig: FL.FlowFigure, width: int | None = None, height: int | None = None, scale: float = 2.0
):
    """The figure as a QImage of width x height logical units (the export size by default)."""
    w0, h0 = export_size(fig)
    width, height = width or w0, height or h0
    return white_image(width, height, scale, lambda p: paint_flow(p, fig, width, height))


def save_flow_figure(fig: FL.FlowFigure, path: str, scale: float = 2.0) -> str:
    """Write the flow figure to `path` (.png, .svg or .pdf), atomically. Returns the path."""
    width, height = export_size(fig)
    return write_painted(
        path,
        width,
        height,
        lambda p, raster: paint_flow(p, fig, width, height, raster=raster),
        fig.title,
        f"gradviz flow chart: {fig.subtitle}",
        scale,
    )
