"""QPainter with gradviz's pens, fonts, text and polylines: what the grid and flow figure
painters share, whatever the output (PNG image, SVG generator, PDF writer, a widget)."""

from __future__ import annotations

import numpy as np

from gradviz.plots.palette import NAN_COLOR
from gradviz.qt.export.layout import qfont

POLY_CHUNK = 8  # points per drawPolyline call on raster outputs


class Painter:
    """Holds the QPainter and the Qt names; every format goes through draw()."""

    def __init__(self, painter, raster: bool = False):
        from PySide6 import QtCore, QtGui

        self.p, self.QtCore, self.QtGui = painter, QtCore, QtGui
        # Qt's raster engine strokes one antialiased wide polyline with round joins as a whole
        # (cost grows much faster than its length: 2000 points ~4 s); pieces of POLY_CHUNK points
        # look the same and are >10x faster (8 rather than 16: the examples' 200-element grid
        # painted in 0.18 s instead of 0.26, ~0.2% of pixels differing where pieces meet). Vector
        # outputs keep one element per curve.
        self.chunk = POLY_CHUNK if raster else 0
        self.p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        self.p.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)

    # small helpers
    def font(self, px: float, bold: bool = False, italic: bool = False):
        f = qfont(px, bold, italic)
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
        flags = {
            "left": Qt.AlignmentFlag.AlignLeft,
            "right": Qt.AlignmentFlag.AlignRight,
            "center": Qt.AlignmentFlag.AlignHCenter,
        }[align] | Qt.AlignmentFlag.AlignVCenter
        self.pen(color)
        if elide:
            s = self.QtGui.QFontMetricsF(self.p.font()).elidedText(
                s, Qt.TextElideMode.ElideRight, w
            )
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
        if dashed:  # each piece starts its dashes where the previous one stopped
            seg = np.hypot(np.diff(np.asarray(xs, float)), np.diff(np.asarray(ys, float)))
            along = np.concatenate([[0.0], np.cumsum(seg)]) / max(pen.widthF(), 1e-9)
        # consecutive pieces share their end point, so the line stays continuous (round caps
        # where two pieces meet draw the same disc a round join would)
        for i in range(0, len(pts) - 1, step):
            if dashed:
                pen.setDashOffset(float(along[i]))
                self.p.setPen(pen)
            self.p.drawPolyline(QtGui.QPolygonF(pts[i : i + step + 1]))

    def marker(self, kind: str, x: float, y: float):
        QtCore, QtGui = self.QtCore, self.QtGui
        self.pen(NAN_COLOR, 1.3)
        if kind == "nan":
            d = 3.5
            self.p.drawLine(QtCore.QPointF(x - d, y - d), QtCore.QPointF(x + d, y + d))
            self.p.drawLine(QtCore.QPointF(x - d, y + d), QtCore.QPointF(x + d, y - d))
            return
        self.brush(NAN_COLOR)
        up = kind == "posinf"
        d = 4.0
        tri = [
            QtCore.QPointF(x, y - d if up else y + d),
            QtCore.QPointF(x - d, y + d if up else y - d),
            QtCore.QPointF(x + d, y + d if up else y - d),
        ]
        self.p.drawPolygon(QtGui.QPolygonF(tri))
        self.no_brush()


def paint_device(device, paint, what: str) -> None:
    """Run paint(painter) on a QPaintDevice (SVG generator, PDF writer), ending the painter."""
    from PySide6 import QtGui

    p = QtGui.QPainter()
    if not p.begin(device):
        raise OSError(f"could not start drawing the {what}")
    try:
        paint(p)
    finally:
        p.end()
