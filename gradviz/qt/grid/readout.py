"""The value under the mouse in a row's plots (issue 13 item 11): a small label in the corner of
the hovered cell away from the cursor (a fixed top corner covered the data it described). Cheap
at any size: the element comes from the cursor's x coordinate (rounded to the nearest index),
never from a search over the drawn points, and the values are read from the run's own gradients
(not the decimated curve), one element per mode.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject

from gradviz.model import MODES
from gradviz.plots.ticks import fmt
from gradviz.qt.grid.axis import small_font
from gradviz.qt.grid.cell import Cell
from gradviz.qt.theme import surface

# Views whose x axis is the flat element index: the readout names the element and its values.
INDEX_KINDS = ("values", "difference")


def element_text(result, tensor: str, index: int) -> str | None:
    """ "x[3, 1] (#13): custom 1 · default 0 · numeric 1" for the element at flat `index` of the
    tensor's gradients in `result`; None when no gradient of it has that element."""
    t = result.tensor(tensor) if result is not None else None
    if t is None or index < 0:
        return None
    parts = []
    for mode in MODES + tuple(m for m in t.grads if m not in MODES):
        g = t.grads.get(mode)
        if g is None:
            continue
        flat = np.ravel(g)
        if index < flat.size:  # a gradient of the wrong shape may be shorter
            parts.append(f"{mode} {fmt(float(flat[index]))}")
    if not parts:
        return None
    shape = tuple(t.shape)
    where = f"#{index}"
    if shape and int(np.prod(shape)) > index:
        where = (
            f"{tensor}[{', '.join(str(int(i)) for i in np.unravel_index(index, shape))}] (#{index})"
        )
    return f"{where}: " + " · ".join(parts)


def cell_text(cell: Cell, results: dict, tensor: str, x: float, y: float) -> str | None:
    """What the point (x, y), in the plot's data coordinates, is in this cell."""
    panel = cell.panel
    if panel is None or not cell.has_data:
        return None
    if panel.kind in INDEX_KINDS and panel.series is not None:
        n = panel.series.n
        i = int(np.floor(x + 0.5))
        if not 0 <= i < n:
            return None
        return element_text(results.get(cell.framework), tensor, i)
    image = cell.data.get("image")
    if image is not None:  # heatmap: one cell per block of elements
        r, c = int(np.floor(y)), int(np.floor(x))
        if not (0 <= r < image.shape[0] and 0 <= c < image.shape[1]):
            return None
        v = fmt(float(image[r, c]))
        br, bc = cell.data.get("block", (1, 1))
        if (br, bc) == (1, 1):
            return f"row {r}, col {c}: {v}"
        # a reduced heatmap: the cell holds its block's value of largest magnitude, not one element's
        return (
            f"rows {r * br}–{(r + 1) * br - 1}, cols {c * bc}–{(c + 1) * bc - 1}: largest |g| {v}"
        )
    edges = cell.data.get("edges")
    if edges is not None:  # histogram: the bin under the cursor
        b = int(np.searchsorted(edges, x, side="right")) - 1
        if not 0 <= b < len(cell.data["counts"]):
            return None
        return (
            f"[{fmt(float(edges[b]))}, {fmt(float(edges[b + 1]))}): {int(cell.data['counts'][b])}"
        )
    # scatter, vs input, projections: the cursor's place on the plot's own axes
    return f"{panel.xlabel or 'x'} {fmt(x)}, {panel.ylabel or 'y'} {fmt(y)}"


class HoverReadout:
    """Follows the mouse over one row's canvas; `results()` gives the grid's {framework: RunResult}."""

    def __init__(self, row, results: Callable[[], dict]):
        self.row, self.results = row, results
        self.label = pg.TextItem("", anchor=(1, 0))
        self._colors = None  # (text, fill) the label was last given
        self.label.setFont(small_font(7))
        self.label.setZValue(2000)
        self.label.hide()
        self.text = ""  # what the label says now ("" when hidden; tests)
        row.canvas.scene().sigMouseMoved.connect(self.moved)
        # the scene sees no move when the mouse leaves the canvas: a readout stayed behind
        self._leave = _LeaveFilter(self.hide, row.canvas)
        row.canvas.viewport().installEventFilter(self._leave)

    def moved(self, scene_pos) -> None:
        for cell in self.row.cells:
            vb = cell.slot.vb
            if vb.sceneBoundingRect().contains(scene_pos):
                p = vb.mapSceneToView(scene_pos)
                text = cell_text(cell, self.results(), self.row.name, p.x(), p.y())
                if text:
                    self.show(vb, text, vb.mapFromScene(scene_pos))
                    return
                break
        self.hide()

    def colors(self) -> tuple[str, str]:
        """(text, fill) of the label in the scheme the window shows: the plot's note colour on a
        nearly opaque panel of the readout surface, readable over any curve."""
        return surface("note"), surface("readout_fill")

    def show(self, vb, text: str, cursor=None) -> None:
        """`cursor`: the mouse in vb's own coordinates; the label goes to the corner away from it."""
        colors = self.colors()
        if colors != self._colors:  # first shown, or the scheme changed since
            self._colors = colors
            self.label.setColor(colors[0])
            fill = pg.mkColor(colors[1])
            fill.setAlpha(230)
            self.label.fill = pg.mkBrush(fill)
        if self.label.parentItem() is not vb:
            self.label.setParentItem(vb)
        self.label.setText(text)
        # wrapped to the plot's width: the plot clips what sticks out (the start of the text)
        self.label.setTextWidth(-1)
        if self.label.boundingRect().width() > vb.width() - 4:
            self.label.setTextWidth(max(40.0, vb.width() - 4))
        w, h = vb.width(), vb.height()
        # the corner diagonally away from the cursor: the hovered point stays in sight
        right = cursor is None or cursor.x() < w / 2
        below = cursor is not None and cursor.y() < h / 2
        self.label.setAnchor((1 if right else 0, 1 if below else 0))
        self.label.setPos(w - 2 if right else 2, h if below else 0)
        self.label.show()
        self.text = text

    def hide(self) -> None:
        self.label.hide()
        self.text = ""


class _LeaveFilter(QObject):
    def __init__(self, on_leave, parent=None):
        super().__init__(parent)
        self.on_leave = on_leave

    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Leave:
            self.on_leave()
        return False
