"""Draw a grid figure description (gradviz.plots.figure.Figure) with QPainter: title, legend,
row headers and every panel. The same routine draws every format (gradviz/qt/export/png.py,
svg.py, pdf.py); the window draws the same description with pyqtgraph (gradviz/qt/grid/)."""

from __future__ import annotations

import numpy as np

from gradviz.plots import figure as F
from gradviz.plots.palette import NAN_COLOR, VERDICT_TEXT, diverging_rgb
from gradviz.qt.export.layout import (
    LEGEND_H,
    LEGEND_PX,
    MARGIN,
    PANEL_TITLE_H,
    PLOT_LEFT,
    PLOT_RIGHT,
    ROW_HEADER_H,
    SUBTITLE_H,
    TITLE_H,
    Layout,
    Rect,
    fmt,
    legend_items,
    nice_ticks,
    text_w,
    value_to_px,
)
from gradviz.qt.export.painter import Painter
from gradviz.qt.theme import framework_color


class GridPainter(Painter):
    """Every format goes through draw()."""

    def draw(self, fig: F.Figure, lay: Layout):
        p = self.p
        p.fillRect(self.QtCore.QRectF(0, 0, lay.width, lay.height), self.QtGui.QColor("white"))
        room = lay.width - 2 * MARGIN
        px = 15.0
        while px > 10 and text_w(fig.title, px, True) > room:  # shrink before eliding
            px -= 0.5
        self.font(px, bold=True)
        self.text(MARGIN, MARGIN, room, TITLE_H, fig.title)
        px = 10.5
        while px > 8 and text_w(fig.subtitle, px) > room:
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
        items = legend_items(fig)
        for n, line in enumerate(lay.legend_lines):
            cx, y = float(MARGIN), lay.legend_y + n * LEGEND_H
            for k in line:
                kind, w = items[k]
                if kind == "entry":
                    e = fig.legend[k]
                    if e.marker == "dot":
                        self.pen(e.color, 1.0)
                        self.brush(e.color)
                        self.p.drawEllipse(self.QtCore.QPointF(cx + 13, y + 12), 3.0, 3.0)
                        self.no_brush()
                    else:
                        self.pen(e.color, 2.2, e.dash)
                        self.p.drawLine(
                            self.QtCore.QPointF(cx, y + 12), self.QtCore.QPointF(cx + 26, y + 12)
                        )
                    self.text(cx + 31, y, w, 24, e.label, elide=False)
                elif kind == "nan":
                    self.marker("nan", cx + 5, y + 12)
                    self.text(cx + 13, y, w, 24, "NaN", elide=False)
                else:
                    self.marker("posinf", cx + 5, y + 12)
                    self.marker("neginf", cx + 17, y + 12)
                    self.text(cx + 25, y, w, 24, "±Inf (position)", elide=False)
                cx += w

    def _row_header(self, row: F.Row, columns, y, width):
        self.font(11)
        parts = [(f"{fw}: ", v) for fw, v in row.verdicts.items()]
        vw = sum(self.text_width(a) + text_w(v, 11, True) + 16 for a, v in parts)
        self.font(12, bold=True)
        room = width - 2 * MARGIN - vw - 18
        self.text(MARGIN, y, room, ROW_HEADER_H, row.label)
        x = MARGIN + min(self.text_width(row.label), room) + 18
        for label, v in parts:
            self.font(11)
            self.text(x, y, 200, ROW_HEADER_H, label, color="#333333", elide=False)
            x += self.text_width(label)
            self.font(11, bold=True)
            self.text(x, y, 200, ROW_HEADER_H, v, color=VERDICT_TEXT.get(v, "#333333"), elide=False)
            x += self.text_width(v) + 16

    def _panel_title(self, panel, x: float, y: float, width: float) -> None:
        """The panel's title: its framework in the framework's colour (the column group it is
        of), the rest in the mode's, as the window's plot titles (qt/grid/cell.py)."""
        fw, sep, rest = panel.title.partition(" · ")
        if not sep or fw != panel.framework:
            self.text(x, y, width, PANEL_TITLE_H, panel.title, color=panel.color)
            return
        fw_w = min(self.text_width(fw), width)
        self.text(x, y, fw_w + 1, PANEL_TITLE_H, fw, color=framework_color(fw, "light"))
        rest_x = x + fw_w
        self.text(rest_x, y, max(width - fw_w, 0), PANEL_TITLE_H, f" · {rest}", color=panel.color)

    def _panel(self, panel: F.Panel, box: Rect, plot: Rect):
        QtCore = self.QtCore
        self.font(11, bold=True)
        badge_w = 0
        if panel.verdict and (panel.mode == "custom" or panel.mode.startswith("custom~")):
            self.font(10, bold=True)
            badge_w = self.text_width(panel.verdict) + 12
            color = VERDICT_TEXT.get(panel.verdict, "#333333")
            self.pen(color, 1.0)
            self.brush(color, 40)
            p0 = QtCore.QRectF(
                box.right - badge_w - PLOT_RIGHT, box.y + 1, badge_w, PANEL_TITLE_H - 2
            )
            self.p.drawRoundedRect(p0, 4, 4)
            self.no_brush()
            self.text(
                p0.x(), p0.y(), p0.width(), p0.height(), panel.verdict, "center", color, elide=False
            )
            self.font(11, bold=True)
        title_w = box.w - PLOT_LEFT - badge_w - PLOT_RIGHT - 4
        px = 11.0
        while px > 8.5 and text_w(panel.title, px, True) > title_w:  # shrink before eliding
            px -= 0.5
        self.font(px, bold=True)
        self._panel_title(panel, box.x + PLOT_LEFT, box.y, title_w)
        if panel.nonfinite_text:
            # in the title line, where it never hides data
            used = self.text_width(panel.title) + 10
            self.font(10, bold=True)
            self.text(
                box.x + PLOT_LEFT + used,
                box.y,
                max(title_w - used, 0),
                PANEL_TITLE_H,
                panel.nonfinite_text,
                "right",
                NAN_COLOR,
            )
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
            self.p.drawText(
                QtCore.QRectF(plot.x + 8, plot.y + 8, plot.w - 16, plot.h - 16),
                int(QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap),
                panel.note or "nothing to draw",
            )
            return
        xr = panel.x_range or (0.0, 1.0)
        yr = panel.y_range or (0.0, 1.0)
        if panel.heatmap is not None:
            self._heatmap(panel, plot)
        else:
            self._axes(plot, xr, yr, zero_line=not panel.log_y)
            self.p.save()
            self.p.setClipRect(QtCore.QRectF(plot.x, plot.y, plot.w, plot.h))
            if panel.series is not None:
                self._series(panel, plot, xr, yr)
            elif panel.hist is not None:
                self._hist(panel, plot, yr)
            elif panel.scatter is not None:
                self._scatter(panel.scatter, panel.color, plot, xr, yr, diagonal=True)
            for k, ps in enumerate(panel.points):
                self._scatter(ps, ps.color, plot, xr, yr, diagonal=k == 0)
            self.p.restore()
            if panel.series is not None:
                self._nonfinite_markers(panel.series, plot, xr)

    def _axes(self, plot: Rect, xr, yr, zero_line: bool = True):
        """Ticks and grid lines; y = 0 a darker line unless it is no zero (log10 |g| = 0)."""
        QtCore = self.QtCore
        self.font(9.5)
        for t in nice_ticks(*yr):
            y = float(value_to_px(t, yr[0], yr[1], plot.bottom, plot.y))
            self.pen("#bdbdbd" if t == 0 and zero_line else "#e3e3e3", 0.6)
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
        if not panel.dots:
            self.pen(panel.color, 1.1 if dense else 1.4, panel.dash)
            self.polyline(xs, ys)
        if panel.dots or not dense:
            self.pen(panel.color, 1.0)
            self.brush(panel.color)
            r = 1.8
            for a, b in zip(xs, ys):
                self.p.drawEllipse(self.QtCore.QPointF(float(a), float(b)), r, r)
            self.no_brush()

    def _nonfinite_markers(self, s, plot: Rect, xr):
        nf = s.nonfinite
        for kind, xs, y in (
            ("nan", nf.nan_x, plot.bottom - 6),
            ("posinf", nf.posinf_x, plot.y + 6),
            ("neginf", nf.neginf_x, plot.bottom - 6),
        ):
            px = value_to_px(xs, xr[0], xr[1], plot.x, plot.right)
            for x in np.unique(np.round(px, 1)):  # one glyph per spot
                self.marker(kind, float(x), y)

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

    def _scatter(self, sc, color: str, plot: Rect, xr, yr, diagonal: bool):
        """Dots of sc.x, sc.y (a Scatter or a PointSet), over the diagonal y = x."""
        QtGui, QtCore = self.QtGui, self.QtCore
        lo, hi = max(xr[0], yr[0]), min(xr[1], yr[1])
        if diagonal and hi > lo:
            self.pen("#8a8a8a", 0.9, "dash")
            self.polyline(
                value_to_px([lo, hi], xr[0], xr[1], plot.x, plot.right),
                value_to_px([lo, hi], yr[0], yr[1], plot.bottom, plot.y),
            )
        xs = value_to_px(sc.x, xr[0], xr[1], plot.x, plot.right)
        ys = value_to_px(sc.y, yr[0], yr[1], plot.bottom, plot.y)
        # one dot per output pixel: more are invisible and only make the file big
        pts = np.unique(np.round(np.stack([xs, ys], axis=1)), axis=0)
        path = QtGui.QPainterPath()
        r = 1.7
        for a, b in pts:
            path.addEllipse(QtCore.QPointF(float(a), float(b)), r, r)
        self.pen(color, 0.6)
        self.brush(color, 150)
        self.p.drawPath(path)
        self.no_brush()

    def _heatmap(self, panel: F.Panel, plot: Rect):
        QtGui, QtCore = self.QtGui, self.QtCore
        hm = panel.heatmap
        top = panel.y_range[1] if panel.y_range else 1.0
        rgb = diverging_rgb(hm.data, top)
        h, w = rgb.shape[:2]
        img = QtGui.QImage(
            np.ascontiguousarray(rgb).data, w, h, 3 * w, QtGui.QImage.Format.Format_RGB888
        ).copy()
        bar = 10
        area = Rect(plot.x, plot.y, plot.w - bar - 34, plot.h)
        # the image fills the plot area (cells stretch): the colour bar takes the right edge
        self.p.drawImage(QtCore.QRectF(area.x, area.y, area.w, area.h), img)
        self.pen("#9a9a9a", 0.8)
        self.no_brush()
        self.p.drawRect(QtCore.QRectF(area.x, area.y, area.w, area.h))
        # colour bar
        ramp = diverging_rgb(np.linspace(top, -top, 64)[:, None], top)
        bimg = QtGui.QImage(
            np.ascontiguousarray(ramp).data, 1, 64, 3, QtGui.QImage.Format.Format_RGB888
        ).copy()
        bx = area.right + 6
        self.p.drawImage(QtCore.QRectF(bx, area.y, bar, area.h), bimg)
        self.p.drawRect(QtCore.QRectF(bx, area.y, bar, area.h))
        self.font(9)
        for v, y in ((top, area.y), (0.0, area.y + area.h / 2), (-top, area.bottom)):
            self.text(bx + bar + 2, y - 7, 40, 14, fmt(v), "left", "#444444", elide=False)
        # row / column extents
        r, c = hm.shape[0], int(np.prod(hm.shape[1:]))
        self.text(area.x - 50, area.y - 1, 46, 14, "0", "right", "#444444", elide=False)
        self.text(
            area.x - 50, area.bottom - 13, 46, 14, str(r - 1), "right", "#444444", elide=False
        )
        self.text(area.x - 2, area.bottom + 3, 40, 14, "0", "left", "#444444", elide=False)
        self.text(
            area.right - 60, area.bottom + 3, 60, 14, str(c - 1), "right", "#444444", elide=False
        )
