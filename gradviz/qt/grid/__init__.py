"""The window's gradient grid, split by job: view (the scroll area of rows), fill (a row drawn
from its description), row (a tensor's header and plots), cell (one reusable plot and its state),
axis (tick labels), notes (a plot's note line), draw (a panel per view kind), links (one range per
row), readout (the value under the mouse). It draws the figure description of gradviz.plots.figure."""

from gradviz.qt.grid.view import GridView

__all__ = ["Cell", "CellPlot", "GridView", "TensorRow"]


def __getattr__(name: str):
    # the pyqtgraph side, imported when first asked for (see view.py: not before the first paint)
    if name in ("Cell", "CellPlot"):
        from gradviz.qt.grid import cell

        return getattr(cell, name)
    if name == "TensorRow":
        from gradviz.qt.grid.row import TensorRow

        return TensorRow
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
