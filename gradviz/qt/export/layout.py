"""Where everything of an exported grid figure goes (logical units: 1 unit = 1 px at scale 1,
1/96 inch in SVG/PDF), fonts and their widths, ticks and number formats."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gradviz.plots import figure as F
from gradviz.plots.ticks import fmt, nice_ticks  # noqa: F401 - the painters' names for them
from gradviz.qt.export.app import ensure_app

MARGIN = 16
PANEL_W, PANEL_H = 300, 210
PANEL_W_SINGLE, PANEL_H_SINGLE = 520, 330  # a single exported plot gets more room
MIN_WIDTH = 560  # title, subtitle and legend need room
GAP_X, GAP_Y = 14, 10
TITLE_H, SUBTITLE_H, LEGEND_H, ROW_HEADER_H = 24, 18, 24, 22
PANEL_TITLE_H = 18
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 58, 10, 6, 44
LEGEND_PX = 11
FONT_FAMILIES = ["DejaVu Sans", "Helvetica", "Arial", "Liberation Sans"]


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
    panel: tuple[tuple[Rect, ...], ...]  # whole panel, [row][col]
    plot: tuple[tuple[Rect, ...], ...]  # data area inside the panel, [row][col]
    row_header_y: tuple[float, ...]
    legend_lines: tuple[tuple[int, ...], ...] = ((),)  # indices of legend entries per line
    legend_y: float = 0.0


def qfont(px: float, bold: bool = False, italic: bool = False):
    from PySide6 import QtGui

    f = QtGui.QFont()
    f.setFamilies(FONT_FAMILIES)
    f.setStyleHint(QtGui.QFont.StyleHint.SansSerif)
    f.setPixelSize(max(1, int(round(px))))
    f.setBold(bold)
    f.setItalic(italic)
    return f


def text_w(s: str, px: float, bold: bool = False) -> float:
    from PySide6 import QtGui

    return QtGui.QFontMetricsF(qfont(px, bold)).horizontalAdvance(s)


def legend_items(fig: F.Figure) -> list[tuple[str, float]]:
    """(kind, width) of each legend item: entries, then the non-finite marker keys if needed."""
    items = [("entry", 31 + text_w(e.label, LEGEND_PX) + 18) for e in fig.legend]
    if any(p.series is not None and p.series.nonfinite.total for r in fig.panels for p in r):
        items.append(("nan", 13 + text_w("NaN", LEGEND_PX) + 18))
        items.append(("inf", 25 + text_w("±Inf (position)", LEGEND_PX) + 18))
    return items


def layout(fig: F.Figure) -> Layout:
    ensure_app()
    rows, cols = fig.shape
    cols = max(cols, 1)
    pw, ph = (PANEL_W, PANEL_H) if cols > 1 else (PANEL_W_SINGLE, PANEL_H_SINGLE)
    width = int(2 * MARGIN + cols * pw + (cols - 1) * GAP_X)
    width = max(width, MIN_WIDTH)
    # legend entries flow onto as many lines as the width needs
    lines, cur, used = [], [], 0.0
    for k, (_, w) in enumerate(legend_items(fig)):
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
            qrow.append(
                Rect(x + PLOT_LEFT, top, pw - PLOT_LEFT - PLOT_RIGHT, y + ph - PLOT_BOTTOM - top)
            )
        panels.append(tuple(prow))
        plots.append(tuple(qrow))
        y += ph + GAP_Y
    height = int(y - GAP_Y + MARGIN)
    return Layout(
        width, height, tuple(panels), tuple(plots), tuple(headers), tuple(lines), legend_y
    )


def value_to_px(v, lo: float, hi: float, a: float, b: float):
    """Map v in [lo, hi] to [a, b] (b < a for a y axis pointing up)."""
    span = (hi - lo) or 1.0
    return a + (np.asarray(v, dtype=np.float64) - lo) * ((b - a) / span)
