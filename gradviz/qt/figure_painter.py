"""Draw a grid figure (gradviz.plots.figure.Figure) to PNG, SVG or PDF with one QPainter routine.

Works headless: with no display and no QApplication, it sets QT_QPA_PLATFORM=offscreen (unless set)
and creates a QGuiApplication. Curves arrive already decimated (min/max per bucket, so a
1M-element gradient is ~1600 points with its spikes), scatter points are thinned to one per
output pixel: a 1M-element grid gives an SVG of a few hundred KiB in about a second.
pyqtgraph's own SVG exporter is not used (huge files, and broken on PySide6 >= 6.11).

Public:
    save_figure(figure, path, scale=2)          format from the suffix: .png .svg .pdf
    save_grid(results, path, view="values", comparisons=None)   build + save (used by the CLI)
    render_image(figure, scale=2) -> QImage
    layout(figure) -> Layout                    where each panel's plot area is (logical units)
    atomic_output(path)                         context manager: temp file in the same folder,
                                                os.replace on success, removed on any failure
"""
from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

import numpy as np

from gradviz.plots import figure as F

FORMATS = (".png", ".svg", ".pdf")

# Logical layout units (1 unit = 1 px at scale 1, 1/96 inch in SVG/PDF).
MARGIN = 16
PANEL_W, PANEL_H = 300, 210
PANEL_W_SINGLE, PANEL_H_SINGLE = 520, 330      # a single exported plot gets more room
MIN_WIDTH = 560                                 # title, subtitle and legend need room
GAP_X, GAP_Y = 14, 10
TITLE_H, SUBTITLE_H, LEGEND_H, ROW_HEADER_H = 24, 18, 24, 22
PANEL_TITLE_H = 18
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 58, 10, 6, 44
FONT_FAMILIES = ["DejaVu Sans", "Helvetica", "Arial", "Liberation Sans"]
NONFINITE_COLOR = "#c62828"
POLY_CHUNK = 16                                  # points per drawPolyline call on raster outputs

_app = None


def _ensure_app():
    """A Q(Gui)Application is needed for fonts; create one (offscreen if no display) if none."""
    global _app
    from PySide6.QtGui import QGuiApplication
    app = QGuiApplication.instance()
    if app is None:
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        _app = app = QGuiApplication(["gradviz-export"])
    return app


# --- layout --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h


@dataclass(frozen=True)
class Layout:
    width: int
    height: int
    panel: tuple[tuple[Rect, ...], ...]       # whole panel, [row][col]
    plot: tuple[tuple[Rect, ...], ...]        # data area inside the panel, [row][col]
    row_header_y: tuple[float, ...]
    legend_lines: tuple[tuple[int, ...], ...] = ((),)   # indices of legend entries per line
    legend_y: float = 0.0


def _qfont(px: float, bold: bool = False, italic: bool = False):
    from PySide6 import QtGui
    f = QtGui.QFont()
    f.setFamilies(FONT_FAMILIES)
    f.setStyleHint(QtGui.QFont.StyleHint.SansSerif)
    f.setPixelSize(max(1, int(round(px))))
    f.setBold(bold)
    f.setItalic(italic)
    return f


def _text_w(s: str, px: float, bold: bool = False) -> float:
    from PySide6 import QtGui
    return QtGui.QFontMetricsF(_qfont(px, bold)).horizontalAdvance(s)


LEGEND_PX = 11


def _legend_items(fig: F.Figure) -> list[tuple[str, float]]:
    """(kind, width) of each legend item: entries, then the non-finite marker keys if needed."""
    items = [("entry", 31 + _text_w(e.label, LEGEND_PX) + 18) for e in fig.legend]
    if any(p.series is not None and p.series.nonfinite.total for r in fig.panels for p in r):
        items.append(("nan", 13 + _text_w("NaN", LEGEND_PX) + 18))
        items.append(("inf", 25 + _text_w("±Inf (position)", LEGEND_PX) + 18))
    return items


def layout(fig: F.Figure) -> Layout:
    _ensure_app()
    rows, cols = fig.shape
    cols = max(cols, 1)
    pw, ph = (PANEL_W, PANEL_H) if cols > 1 else (PANEL_W_SINGLE, PANEL_H_SINGLE)
    width = int(2 * MARGIN + cols * pw + (cols - 1) * GAP_X)
    width = max(width, MIN_WIDTH)
    # legend entries flow onto as many lines as the width needs
    lines, cur, used = [], [], 0.0
    for k, (_, w) in enumerate(_legend_items(fig)):
        if cur and used + w > width - 2 * MARGIN:
            lines.append(tuple(cur))
            cur, used = [], 0.0
        cur.append(k)
        used += w
    lines.append(tuple(cur))
    legend_y = MARGIN + TITLE_H + SUBTITLE_H
    y = legend_y + LEGEND_H * len(lines)
    x0 = (width - (cols * pw + (cols - 1) * GAP_X)) / 2
    panels, plots, headers = [], [], []
    for _ in range(rows):
        headers.append(y)
        y += ROW_HEADER_H
        prow, qrow = [], []
        for j in range(cols):
            x = x0 + j * (pw + GAP_X)
            prow.append(Rect(x, y, pw, ph))
            top = y + PANEL_TITLE_H + PLOT_TOP
            qrow.append(Rect(x + PLOT_LEFT, top, pw - PLOT_LEFT - PLOT_RIGHT,
                             y + ph - PLOT_BOTTOM - top))
        panels.append(tuple(prow))
        plots.append(tuple(qrow))
        y += ph + GAP_Y
    height = int(y - GAP_Y + MARGIN)
    return Layout(width, height, tuple(panels), tuple(plots), tuple(headers), tuple(lines), legend_y)


def value_to_px(v, lo: float, hi: float, a: float, b: float):
    """Map v in [lo, hi] to [a, b] (b < a for a y axis pointing up)."""
    span = (hi - lo) or 1.0
    return a + (np.asarray(v, dtype=np.float64) - lo) * ((b - a) / span)


# --- ticks and numbers ---------------------------------------------------------------------------

def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return []
    raw = (hi - lo) / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step) * step
    ticks, v = [], start
    while v <= hi + step * 1e-9:
        ticks.append(0.0 if abs(v) < step * 1e-9 else v)
        v += step
    return ticks


def fmt(v: float) -> str:
    a = abs(v)
    if a != 0 and (a >= 1e5 or a < 1e-3):
        m, e = f"{v:.3g}".split("e") if "e" in f"{v:.3g}" else (f"{v:.3g}", None)
        if e is None:
            m, e = f"{v:.2e}".split("e")
        return f"{float(m):g}e{int(e)}"
    return f"{v:.4g}"


# --- drawing -------------------------------------------------------------------------------------

class _Painter:
    """Holds the QPainter and the Qt names; every format goes through draw()."""

    def __init__(self, painter, raster: bool = False):
        from PySide6 import QtCore, QtGui
        self.p, self.QtCore, self.QtGui = painter, QtCore, QtGui
        # Qt's raster engine strokes one antialiased wide polyline with round joins as a whole
        # (cost grows much faster than its length: 2000 points ~4 s); pieces of POLY_CHUNK points
        # look the same and are >10x faster. Vector outputs keep one element per curve.
        self.chunk = POLY_CHUNK if raster else 0
        self.p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        self.p.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)

    # small helpers
    def font(self, px: float, bold: bool = False, italic: bool = False):
        f = _qfont(px, bold, italic)
        self.p.setFont(f)
        return f

    def pen(self, color: str, width: float = 1.0, dash: str = "solid"):
        QtCore, QtGui = self.QtCore, self.QtGui
        pen = QtGui.QPen(QtGui.QColor(color))
        pen.setWidthF(width)
        pen.setCapStyle(QtCore.Qt.PenCapStyle.RoundCap)
        pen.setJoinStyle(QtCore.Qt.PenJoinStyle.RoundJoin)
        if dash == "dash":
            pen.setStyle(QtCore.Qt.PenStyle.DashLine)
        elif dash == "dot":
            pen.setStyle(QtCore.Qt.PenStyle.DotLine)
        self.p.setPen(pen)

    def no_brush(self):
        self.p.setBrush(self.QtCore.Qt.BrushStyle.NoBrush)

    def brush(self, color: str, alpha: int = 255):
        c = self.QtGui.QColor(color)
        c.setAlpha(alpha)
        self.p.setBrush(c)

    def text(self, x, y, w, h, s: str, align: str = "left", color: str = "#222222", elide=True):
        Qt = self.QtCore.Qt
        flags = {"left": Qt.AlignmentFlag.AlignLeft, "right": Qt.AlignmentFlag.AlignRight,
                 "center": Qt.AlignmentFlag.AlignHCenter}[align] | Qt.AlignmentFlag.AlignVCenter
        self.pen(color)
        if elide:
            s = self.QtGui.QFontMetricsF(self.p.font()).elidedText(s, Qt.TextElideMode.ElideRight, w)
        self.p.drawText(self.QtCore.QRectF(x, y, w, h), int(flags), s)

    def text_width(self, s: str) -> float:
        return self.QtGui.QFontMetricsF(self.p.font()).horizontalAdvance(s)

    def polyline(self, xs, ys):
        QtCore, QtGui = self.QtCore, self.QtGui
        pts = [QtCore.QPointF(float(a), float(b)) for a, b in zip(xs, ys)]
        if len(pts) == 1:
            self.p.drawPoint(pts[0])
            return
        if self.chunk < 2 or len(pts) <= self.chunk:
            self.p.drawPolyline(QtGui.QPolygonF(pts))
            return
        step = self.chunk - 1
        pen = self.p.pen()
        dashed = pen.style() != QtCore.Qt.PenStyle.SolidLine
        if dashed:      # each piece starts its dashes where the previous one stopped
            seg = np.hypot(np.diff(np.asarray(xs, float)), np.diff(np.asarray(ys, float)))
            along = np.concatenate([[0.0], np.cumsum(seg)]) / max(pen.widthF(), 1e-9)
        # consecutive pieces share their end point, so the line stays continuous (round caps
        # where two pieces meet draw the same disc a round join would)
        for i in range(0, len(pts) - 1, step):
            if dashed:
                pen.setDashOffset(float(along[i]))
                self.p.setPen(pen)
            self.p.drawPolyline(QtGui.QPolygonF(pts[i:i + step + 1]))

    # the figure
    def draw(self, fig: F.Figure, lay: Layout):
        p = self.p
        p.fillRect(self.QtCore.QRectF(0, 0, lay.width, lay.height), self.QtGui.QColor("white"))
        room = lay.width - 2 * MARGIN
        px = 15.0
        while px > 10 and _text_w(fig.title, px, True) > room:   # shrink before eliding
            px -= 0.5
        self.font(px, bold=True)
        self.text(MARGIN, MARGIN, room, TITLE_H, fig.title)
        px = 10.5
        while px > 8 and _text_w(fig.subtitle, px) > room:
            px -= 0.5
        self.font(px)
        self.text(MARGIN, MARGIN + TITLE_H, room, SUBTITLE_H, fig.subtitle, color="#555555")
        self._legend(fig, lay)
        for i, row in enumerate(fig.rows):
            self._row_header(row, fig.columns, lay.row_header_y[i], lay.width)
            for j, panel in enumerate(fig.panels[i]):
                self._panel(panel, lay.panel[i][j], lay.plot[i][j])

    def _legend(self, fig, lay: Layout):
        self.font(LEGEND_PX)
        items = _legend_items(fig)
        for n, line in enumerate(lay.legend_lines):
            cx, y = float(MARGIN), lay.legend_y + n * LEGEND_H
            for k in line:
                kind, w = items[k]
                if kind == "entry":
                    e = fig.legend[k]
                    self.pen(e.color, 2.2, e.dash)
                    self.p.drawLine(self.QtCore.QPointF(cx, y + 12), self.QtCore.QPointF(cx + 26, y + 12))
                    self.text(cx + 31, y, w, 24, e.label, elide=False)
                elif kind == "nan":
                    self._marker("nan", cx + 5, y + 12)
                    self.text(cx + 13, y, w, 24, "NaN", elide=False)
                else:
                    self._marker("posinf", cx + 5, y + 12)
                    self._marker("neginf", cx + 17, y + 12)
                    self.text(cx + 25, y, w, 24, "±Inf (position)", elide=False)
                cx += w

    def _row_header(self, row: F.Row, columns, y, width):
        self.font(11)
        parts = [(f"{fw}: ", v) for fw, v in row.verdicts.items()]
        vw = sum(self.text_width(a) + _text_w(v, 11, True) + 16 for a, v in parts)
        self.font(12, bold=True)
        room = width - 2 * MARGIN - vw - 18
        self.text(MARGIN, y, room, ROW_HEADER_H, row.label)
        x = MARGIN + min(self.text_width(row.label), room) + 18
        for label, v in parts:
            self.font(11)
            self.text(x, y, 200, ROW_HEADER_H, label, color="#333333", elide=False)
            x += self.text_width(label)
            self.font(11, bold=True)
            self.text(x, y, 200, ROW_HEADER_H, v, color=F.VERDICT_COLORS.get(v, "#333333"), elide=False)
            x += self.text_width(v) + 16

    def _panel(self, panel: F.Panel, box: Rect, plot: Rect):
        QtCore = self.QtCore
        self.font(11, bold=True)
        badge_w = 0
        if panel.verdict and (panel.mode == "custom" or panel.mode.startswith("custom~")):
            self.font(10, bold=True)
            badge_w = self.text_width(panel.verdict) + 12
            color = F.VERDICT_COLORS.get(panel.verdict, "#333333")
            self.pen(color, 1.0)
            self.brush(color, 40)
            p0 = QtCore.QRectF(box.right - badge_w - PLOT_RIGHT, box.y + 1, badge_w, PANEL_TITLE_H - 2)
            self.p.drawRoundedRect(p0, 4, 4)
            self.no_brush()
            self.text(p0.x(), p0.y(), p0.width(), p0.height(), panel.verdict, "center", color, elide=False)
            self.font(11, bold=True)
        title_w = box.w - PLOT_LEFT - badge_w - PLOT_RIGHT - 4
        self.text(box.x + PLOT_LEFT, box.y, title_w, PANEL_TITLE_H, panel.title, color=panel.color)
        if panel.nonfinite_text:
            # in the title line, where it never hides data
            used = self.text_width(panel.title) + 10
            self.font(10, bold=True)
            self.text(box.x + PLOT_LEFT + used, box.y, max(title_w - used, 0), PANEL_TITLE_H,
                      panel.nonfinite_text, "right", NONFINITE_COLOR)
        # frame
        self.pen("#9a9a9a", 0.8)
        self.no_brush()
        self.p.drawRect(QtCore.QRectF(plot.x, plot.y, plot.w, plot.h))
        # axis labels
        self.font(10.5)
        self.text(plot.x, plot.bottom + 17, plot.w, 14, panel.xlabel, "center", "#222222")
        self.p.save()
        self.p.translate(box.x + 9, plot.y + plot.h / 2)
        self.p.rotate(-90)
        self.text(-plot.h / 2, -8, plot.h, 16, panel.ylabel, "center", "#222222")
        self.p.restore()
        if panel.info:
            self.font(9, italic=True)
            self.text(plot.x, plot.bottom + 30, plot.w, 13, panel.info, "center", "#6a6a6a")
        if panel.empty:
            self.font(11, italic=True)
            self.pen("#777777")
            self.p.drawText(QtCore.QRectF(plot.x + 8, plot.y + 8, plot.w - 16, plot.h - 16),
                            int(QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap),
                            panel.note or "nothing to draw")
            return
        xr = panel.x_range or (0.0, 1.0)
        yr = panel.y_range or (0.0, 1.0)
        if panel.heatmap is not None:
            self._heatmap(panel, plot)
        else:
            self._axes(plot, xr, yr)
            self.p.save()
            self.p.setClipRect(QtCore.QRectF(plot.x, plot.y, plot.w, plot.h))
            if panel.series is not None:
                self._series(panel, plot, xr, yr)
            elif panel.hist is not None:
                self._hist(panel, plot, yr)
            elif panel.scatter is not None:
                self._scatter(panel, plot, xr, yr)
            self.p.restore()
            if panel.series is not None:
                self._nonfinite_markers(panel.series, plot, xr)

    def _axes(self, plot: Rect, xr, yr):
        QtCore = self.QtCore
        self.font(9.5)
        for t in nice_ticks(*yr):
            y = float(value_to_px(t, yr[0], yr[1], plot.bottom, plot.y))
            self.pen("#e3e3e3" if t else "#bdbdbd", 0.6)
            self.p.drawLine(QtCore.QPointF(plot.x, y), QtCore.QPointF(plot.right, y))
            self.text(plot.x - 50, y - 7, 46, 14, fmt(t), "right", "#444444", elide=False)
        for t in nice_ticks(*xr, target=4):
            x = float(value_to_px(t, xr[0], xr[1], plot.x, plot.right))
            self.pen("#9a9a9a", 0.8)
            self.p.drawLine(QtCore.QPointF(x, plot.bottom), QtCore.QPointF(x, plot.bottom + 3))
            self.text(x - 30, plot.bottom + 3, 60, 14, fmt(t), "center", "#444444", elide=False)

    def _series(self, panel: F.Panel, plot: Rect, xr, yr):
        s = panel.series
        xs = value_to_px(s.x, xr[0], xr[1], plot.x, plot.right)
        ys = value_to_px(s.y, yr[0], yr[1], plot.bottom, plot.y)
        self.no_brush()
        dense = s.x.size > plot.w / 3
        self.pen(panel.color, 1.1 if dense else 1.4, panel.dash)
        self.polyline(xs, ys)
        if not dense:
            self.pen(panel.color, 1.0)
            self.brush(panel.color)
            r = 1.8
            for a, b in zip(xs, ys):
                self.p.drawEllipse(self.QtCore.QPointF(float(a), float(b)), r, r)
            self.no_brush()

    def _marker(self, kind: str, x: float, y: float):
        QtCore, QtGui = self.QtCore, self.QtGui
        self.pen(NONFINITE_COLOR, 1.3)
        if kind == "nan":
            d = 3.5
            self.p.drawLine(QtCore.QPointF(x - d, y - d), QtCore.QPointF(x + d, y + d))
            self.p.drawLine(QtCore.QPointF(x - d, y + d), QtCore.QPointF(x + d, y - d))
            return
        self.brush(NONFINITE_COLOR)
        up = kind == "posinf"
        d = 4.0
        tri = [QtCore.QPointF(x, y - d if up else y + d), QtCore.QPointF(x - d, y + d if up else y - d),
               QtCore.QPointF(x + d, y + d if up else y - d)]
        self.p.drawPolygon(QtGui.QPolygonF(tri))
        self.no_brush()

    def _nonfinite_markers(self, s, plot: Rect, xr):
        nf = s.nonfinite
        for kind, xs, y in (("nan", nf.nan_x, plot.bottom - 6), ("posinf", nf.posinf_x, plot.y + 6),
                            ("neginf", nf.neginf_x, plot.bottom - 6)):
            px = value_to_px(xs, xr[0], xr[1], plot.x, plot.right)
            for x in np.unique(np.round(px, 1)):      # one glyph per spot
                self._marker(kind, float(x), y)

    def _hist(self, panel: F.Panel, plot: Rect, yr):
        QtGui, QtCore = self.QtGui, self.QtCore
        h = panel.hist
        xr = panel.x_range
        xs = value_to_px(h.edges, xr[0], xr[1], plot.x, plot.right)
        ys = value_to_px(h.counts, yr[0], yr[1], plot.bottom, plot.y)
        # a bin holding a few outliers among millions must still show
        ys = np.where(h.counts > 0, np.minimum(ys, plot.bottom - 2.0), ys)
        path = QtGui.QPainterPath(QtCore.QPointF(float(xs[0]), plot.bottom))
        for k in range(h.counts.size):
            path.lineTo(float(xs[k]), float(ys[k]))
            path.lineTo(float(xs[k + 1]), float(ys[k]))
        path.lineTo(float(xs[-1]), plot.bottom)
        path.closeSubpath()
        self.pen(panel.color, 1.0, panel.dash)
        self.brush(panel.color, 110)
        self.p.drawPath(path)
        self.no_brush()

    def _scatter(self, panel: F.Panel, plot: Rect, xr, yr):
        QtGui, QtCore = self.QtGui, self.QtCore
        sc = panel.scatter
        # y = x: where custom equals the other mode
        lo, hi = max(xr[0], yr[0]), min(xr[1], yr[1])
        if hi > lo:
            self.pen("#8a8a8a", 0.9, "dash")
            self.polyline(value_to_px([lo, hi], xr[0], xr[1], plot.x, plot.right),
                          value_to_px([lo, hi], yr[0], yr[1], plot.bottom, plot.y))
        xs = value_to_px(sc.x, xr[0], xr[1], plot.x, plot.right)
        ys = value_to_px(sc.y, yr[0], yr[1], plot.bottom, plot.y)
        # one dot per output pixel: more are invisible and only make the file big
        pts = np.unique(np.round(np.stack([xs, ys], axis=1)), axis=0)
        path = QtGui.QPainterPath()
        r = 1.7
        for a, b in pts:
            path.addEllipse(QtCore.QPointF(float(a), float(b)), r, r)
        self.pen(panel.color, 0.6)
        self.brush(panel.color, 150)
        self.p.drawPath(path)
        self.no_brush()

    def _heatmap(self, panel: F.Panel, plot: Rect):
        QtGui, QtCore = self.QtGui, self.QtCore
        hm = panel.heatmap
        top = panel.y_range[1] if panel.y_range else 1.0
        rgb = diverging_rgb(hm.data, top)
        h, w = rgb.shape[:2]
        img = QtGui.QImage(np.ascontiguousarray(rgb).data, w, h, 3 * w, QtGui.QImage.Format.Format_RGB888).copy()
        bar = 10
        area = Rect(plot.x, plot.y, plot.w - bar - 34, plot.h)
        # keep cells square-ish only when that still fills most of the area
        self.p.drawImage(QtCore.QRectF(area.x, area.y, area.w, area.h), img)
        self.pen("#9a9a9a", 0.8)
        self.no_brush()
        self.p.drawRect(QtCore.QRectF(area.x, area.y, area.w, area.h))
        # colour bar
        ramp = diverging_rgb(np.linspace(top, -top, 64)[:, None], top)
        bimg = QtGui.QImage(np.ascontiguousarray(ramp).data, 1, 64, 3, QtGui.QImage.Format.Format_RGB888).copy()
        bx = area.right + 6
        self.p.drawImage(QtCore.QRectF(bx, area.y, bar, area.h), bimg)
        self.p.drawRect(QtCore.QRectF(bx, area.y, bar, area.h))
        self.font(9)
        for v, y in ((top, area.y), (0.0, area.y + area.h / 2), (-top, area.bottom)):
            self.text(bx + bar + 2, y - 7, 40, 14, fmt(v), "left", "#444444", elide=False)
        # row / column extents
        r, c = hm.shape[0], int(np.prod(hm.shape[1:]))
        self.text(area.x - 50, area.y - 1, 46, 14, "0", "right", "#444444", elide=False)
        self.text(area.x - 50, area.bottom - 13, 46, 14, str(r - 1), "right", "#444444", elide=False)
        self.text(area.x - 2, area.bottom + 3, 40, 14, "0", "left", "#444444", elide=False)
        self.text(area.right - 60, area.bottom + 3, 60, 14, str(c - 1), "right", "#444444", elide=False)


def diverging_rgb(data: np.ndarray, top: float) -> np.ndarray:
    """Blue (negative) - white (0) - red (positive) uint8 RGB; NaN black, +Inf/-Inf saturated."""
    d = np.asarray(data, dtype=np.float64)
    t = np.clip(np.nan_to_num(d / (top or 1.0), nan=0.0, posinf=1.0, neginf=-1.0), -1, 1)
    neg, pos = np.array([33, 102, 172.0]), np.array([178, 24, 43.0])
    white = np.array([247, 247, 247.0])
    a = np.abs(t)[..., None]
    col = np.where(t[..., None] >= 0, white + (pos - white) * a, white + (neg - white) * a)
    col[np.isnan(d)] = (0, 0, 0)
    return col.round().astype(np.uint8)


# --- output --------------------------------------------------------------------------------------

@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[str]:
    """Yield a temp path in the target's folder; on success it replaces `path` in one step (with
    the mode a plain write would give, gradviz.atomic_file), on any failure it is removed and
    `path` is left as it was."""
    from gradviz.atomic_file import atomic_path
    with atomic_path(path, suffix=".part" + os.path.splitext(str(path))[1]) as tmp:
        yield tmp
        if os.path.getsize(tmp) == 0:
            raise OSError(f"nothing was written to {path}")


def _format_of(path: str) -> str:
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in FORMATS:
        raise ValueError(f"{path}: unknown image format {ext or '(no suffix)'!r}; "
                         f"use one of {', '.join(FORMATS)}")
    return ext


def render_image(fig: F.Figure, scale: float = 2.0):
    """The figure as a QImage, `scale` pixels per layout unit (2 = crisp in print at ~190 dpi)."""
    lay = layout(fig)
    return white_image(lay.width, lay.height, scale, lambda p: _Painter(p, raster=True).draw(fig, lay))


def white_image(width: float, height: float, scale: float, paint):
    """A white QImage of width x height layout units at `scale` pixels per unit (96 dpi units),
    painted by paint(painter) in layout units."""
    _ensure_app()
    from PySide6 import QtGui
    img = QtGui.QImage(int(width * scale), int(height * scale), QtGui.QImage.Format.Format_ARGB32)
    dpm = int(round(96 * scale / 0.0254))
    img.setDotsPerMeterX(dpm)
    img.setDotsPerMeterY(dpm)
    img.fill(QtGui.QColor("white"))
    p = QtGui.QPainter(img)
    try:
        p.scale(scale, scale)
        paint(p)
    finally:
        p.end()
    return img


def _paint_to(device, fig: F.Figure, lay: Layout, what: str) -> None:
    from PySide6 import QtGui
    p = QtGui.QPainter()
    if not p.begin(device):
        raise OSError(f"could not start drawing the {what}")
    try:
        _Painter(p).draw(fig, lay)
    finally:
        p.end()


def _write(fig: F.Figure, tmp: str, ext: str, scale: float) -> None:
    _ensure_app()
    from PySide6 import QtCore, QtGui
    lay = layout(fig)
    if ext == ".png":
        if not render_image(fig, scale).save(tmp, "PNG"):
            raise OSError("Qt could not write the PNG")
    elif ext == ".svg":
        from PySide6.QtSvg import QSvgGenerator
        gen = QSvgGenerator()
        gen.setFileName(tmp)
        gen.setSize(QtCore.QSize(lay.width, lay.height))
        gen.setViewBox(QtCore.QRect(0, 0, lay.width, lay.height))
        gen.setResolution(96)
        gen.setTitle(fig.title)
        gen.setDescription(f"gradviz {fig.view} grid: {fig.subtitle}")
        _paint_to(gen, fig, lay, "SVG")
    else:
        pdf = QtGui.QPdfWriter(tmp)
        pdf.setResolution(96)
        pdf.setPageSize(QtGui.QPageSize(QtCore.QSizeF(lay.width * 0.75, lay.height * 0.75),
                                        QtGui.QPageSize.Unit.Point, "gradviz",
                                        QtGui.QPageSize.SizeMatchPolicy.ExactMatch))
        pdf.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
        pdf.setTitle(fig.title)
        pdf.setCreator("gradviz")
        _paint_to(pdf, fig, lay, "PDF")
        del pdf                                       # flush and close the file


def save_figure(fig: F.Figure, path: str, scale: float = 2.0) -> str:
    """Write `fig` to `path` (.png, .svg or .pdf, from the suffix), atomically. Returns the path."""
    ext = _format_of(path)
    with atomic_output(str(path)) as tmp:
        _write(fig, tmp, ext, scale)
    return os.path.abspath(path)


def save_grid(results: Sequence, path: str, view: str = "values", comparisons=None,
              title: Optional[str] = None, row_views=None) -> str:
    """Build the grid of `results` and save it (the CLI's --plot). Verdicts come from
    `comparisons` or, when None, from gradviz.compare if it is available."""
    _format_of(path)
    if comparisons is None:
        comparisons = _compare(results)
    return save_figure(F.build_figure(results, view, comparisons, title=title, row_views=row_views), path)


def _compare(results):
    try:
        from gradviz.compare import compare_result
    except ImportError:
        return None
    return [compare_result(r) for r in results]
