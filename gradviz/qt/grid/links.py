"""Axis linking within a row: one x and one y range for its cells (the ranges the figure
description chose), kept together when the user zooms one of them."""

from __future__ import annotations

from gradviz.qt.grid.cell import Cell, CellPlot
from gradviz.qt.grid.draw import axis_ranges
from gradviz.qt.grid.ysync import sync_y


def _linkable(c: Cell) -> bool:
    # projections (g·v per direction) and heatmaps have axes of their own
    return c.panel is not None and c.panel.kind not in ("projection", "heatmap")


def link(cells: list[Cell]) -> None:
    """Link the cells with data of one row (and those covered by "computing…", whose curve comes
    back in a moment), then set the row's ranges once on the first: a linked view follows it."""
    data = [c for c in cells if c.has_data and _linkable(c)]
    if not data:
        return
    slots = [c.slot for c in cells if (c in data) or (c.slot.waiting() and _linkable(c))]
    first = data[0].slot
    p = data[0].panel
    xr, yr = p.x_range, p.y_range
    ids = [id(s) for s in slots]
    same = (
        first.linked == ids
        and all(s.ysync is not None for s in slots)
        and all(s.vb.linkedView(0) is (None if s is first else first.vb) for s in slots)
    )
    if not same:
        # links are two-way: a cell still auto-ranging on its own data would push its range onto
        # the others, so auto range goes off everywhere before linking and the ranges are set last
        for s in slots:
            s.item.enableAutoRange(x=False, y=False)
        for s in slots:  # a reused plot may still be linked as it was
            to = None if s is first else first.vb
            if s.vb.linkedView(0) is not to:
                s.item.setXLink(to)  # side by side: pyqtgraph replicates the x range
        sync_y(slots)
        first.linked = ids
        first.ranges = None
    if (
        first.ranges == (xr, yr)
        and _shows(first, xr, yr)
        and all(_shows(s, None, yr) for s in slots)
    ):
        return  # the same row as drawn: no re-ranging
    if xr is not None:
        first.item.setXRange(*xr, padding=0)
    if yr is not None:
        # on each: a range equal to the first's current one emits no change to follow
        for s in slots:
            s.item.setYRange(*yr, padding=0)
    first.ranges = (xr, yr)


def _shows(slot: CellPlot, xr, yr) -> bool:
    """Whether the plot's view is still the range set last (the user may have zoomed since)."""
    (x0, x1), (y0, y1) = slot.vb.viewRange()
    return (xr is None or (x0, x1) == tuple(map(float, xr))) and (
        yr is None or (y0, y1) == tuple(map(float, yr))
    )


def fit(cells: list[Cell]) -> None:
    """Back to the ranges of the description: linked cells through the first, the others each."""
    data = [c for c in cells if c.has_data and _linkable(c)]
    if data:
        data[0].slot.ranges = None
        link(cells)
    for c in cells:
        if c.has_data and not _linkable(c):
            xr, yr = axis_ranges(c.panel)
            c.slot.item.setXRange(*xr, padding=0)
            c.slot.item.setYRange(*yr, padding=0)
