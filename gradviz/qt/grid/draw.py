"""Drawing one panel of the figure description on a cell's pyqtgraph plot, per view kind.
The exporters draw the same panels with QPainter (gradviz/qt/export/grid_painter.py)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from gradviz.plots.description import Panel
from gradviz.plots.palette import (
    DIAGONAL,
    INF_COLOR,
    NAN_COLOR,
    diverging_lut,
)
from gradviz.qt.grid.cell import Cell
from gradviz.qt.theme import surface

MARKER_LIMIT = 2000
_DASH = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine, "dot": Qt.PenStyle.DotLine}


def pen(color: str, dash: str = "solid", width: float = 1.0):
    return pg.mkPen(color, width=width, style=_DASH.get(dash, Qt.PenStyle.SolidLine))


def values_kind(panel: Panel):
    """What a values plot looks like apart from its data: a plot of the same kind only gets new
    data (setData), with no reset, axes or layout change. None: draw anew (markers, notes)."""
    s = panel.series
    if panel.kind != "values" or s is None or s.nonfinite.total:
        return None
    return ("values", panel.framework, panel.mode, panel.dots, s.n if s.decimated else 0)


def axis_ranges(panel: Panel):
    """(x range, y range) of the plot's axes: a heatmap's are its cells (its y_range is colour)."""
    if panel.heatmap is not None:
        rows, cols = panel.heatmap.data.shape
        return (0.0, float(cols)), (0.0, float(rows))
    return panel.x_range, panel.y_range


def draw(cell: Cell, panel: Panel) -> None:
    """Draw `panel` on the cell's plot (already styled and reset as needed)."""
    if panel.empty:
        cell.slot.message(panel.note or "nothing to draw")
        cell.has_data, cell.message = False, panel.note
        return
    if panel.series is not None:
        _series(cell, panel)
    elif panel.hist is not None:
        _hist(cell, panel)
    elif panel.scatter is not None:
        _scatter(cell, panel)
    elif panel.heatmap is not None:
        _heatmap(cell, panel)
    else:
        _points(cell, panel)
    # a reused plot keeps its note labels: each is set (or taken away) again
    cell.slot.warn("⚠ " + panel.nonfinite_text if panel.nonfinite_text else "")
    cell.slot.note(panel.info or "")


def _series(cell: Cell, panel: Panel) -> None:
    s, slot = panel.series, cell.slot
    cell.data = {"x": s.x, "y": s.y, "n": s.n, "decimated": s.decimated}
    if slot.curve is not None:  # the same kind of plot as before: new data only
        slot.curve.setData(s.x, s.y)
        return
    plot = slot.item
    if not panel.log_y:  # log10 |g| = 0 is |g| = 1, not zero
        plot.addLine(y=0, pen=pg.mkPen(surface("zero_line"), width=1))
    if panel.dots:
        item = plot.plot(
            s.x, s.y, pen=None, symbol="o", symbolSize=4, symbolBrush=panel.color, symbolPen=None
        )
    else:
        item = plot.plot(s.x, s.y, pen=pen(panel.color, panel.dash))
    if slot.kind is not None:
        slot.curve = item  # reusable: no markers or notes that may change
    nf = s.nonfinite
    if nf.total:
        for xs, symbol, color in (
            (nf.nan_x, "x", NAN_COLOR),
            (nf.posinf_x, "t1", INF_COLOR),
            (nf.neginf_x, "t", INF_COLOR),
        ):
            if len(xs):
                xs = xs[:MARKER_LIMIT]
                plot.plot(
                    xs,
                    np.zeros(len(xs)),
                    pen=None,
                    symbol=symbol,
                    symbolSize=9,
                    symbolBrush=color,
                    symbolPen=pg.mkPen(color),
                )
        cell.data["nonfinite"] = nf


def _hist(cell: Cell, panel: Panel) -> None:
    h = panel.hist
    cell.slot.item.plot(
        h.edges,
        h.counts,
        stepMode="center",
        fillLevel=0,
        brush=pg.mkBrush(panel.color + "6e"),
        pen=pen(panel.color, panel.dash),
    )
    cell.data = {"edges": h.edges, "counts": h.counts, "n": h.n}
    if h.nonfinite.total:
        cell.data["nonfinite"] = h.nonfinite


def _diagonal(plot, xr, yr) -> None:
    lo, hi = max(xr[0], yr[0]), min(xr[1], yr[1])
    if hi > lo:
        plot.plot([lo, hi], [lo, hi], pen=pen(DIAGONAL, "dash"))


def _scatter(cell: Cell, panel: Panel) -> None:
    sc, plot = panel.scatter, cell.slot.item
    _diagonal(plot, panel.x_range, panel.y_range)
    plot.plot(
        sc.x,
        sc.y,
        pen=None,
        symbol="o",
        symbolSize=4,
        symbolBrush=panel.color + "96",
        symbolPen=None,
    )
    cell.data = {"x": sc.x, "y": sc.y, "n": sc.n}


def _points(cell: Cell, panel: Panel) -> None:
    plot = cell.slot.item
    _diagonal(plot, panel.x_range, panel.y_range)
    for ps in panel.points:
        plot.plot(
            ps.x,
            ps.y,
            pen=None,
            symbol="o",
            symbolSize=6,
            symbolBrush=ps.color,
            symbolPen=None,
            name=ps.label,
        )
    plot.setXRange(*panel.x_range, padding=0)
    plot.setYRange(*panel.y_range, padding=0)
    cell.data = {"projections": {ps.label: ps.y for ps in panel.points}}


def _heatmap(cell: Cell, panel: Panel) -> None:
    hm, plot = panel.heatmap, cell.slot.item
    img = np.where(np.isfinite(hm.data), hm.data, 0.0)
    item = pg.ImageItem(img.T)
    item.setLookupTable(diverging_lut())
    levels = panel.y_range or (-1.0, 1.0)
    item.setLevels(levels)
    plot.addItem(item)
    for ax in ("left", "bottom"):  # ticks count cells: whole numbers only
        plot.getAxis(ax).integer = True
    lut = diverging_lut()
    cmap = pg.ColorMap(np.linspace(0.0, 1.0, len(lut)), lut)
    bar = pg.ColorBarItem(values=levels, colorMap=cmap, interactive=False, width=8)
    bar.setImageItem(item, insert_in=plot)
    cell.slot.colorbar = bar
    plot.invertY(True)
    plot.setAspectLocked(False)
    bad = np.argwhere(~np.isfinite(hm.data))[:MARKER_LIMIT]
    if len(bad):
        plot.plot(
            bad[:, 1] + 0.5,
            bad[:, 0] + 0.5,
            pen=None,
            symbol="x",
            symbolSize=8,
            symbolBrush=NAN_COLOR,
            symbolPen=pg.mkPen(NAN_COLOR),
        )
    xr, yr = axis_ranges(panel)
    plot.setXRange(*xr, padding=0)
    plot.setYRange(*yr, padding=0)
    cell.data = {"image": hm.data, "block": hm.block, "levels": levels}
    if hm.nonfinite.total:
        cell.data["nonfinite"] = hm.nonfinite
