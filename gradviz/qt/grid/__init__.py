"""The window's gradient grid, split by job: view (the scroll area of rows), row (a tensor's
header and plots), cell (one reusable plot and its state), draw (a panel per view kind), links
(one range per row). It draws the figure description of gradviz.plots.figure."""
from gradviz.qt.grid.cell import Cell, CellPlot
from gradviz.qt.grid.row import TensorRow
from gradviz.qt.grid.view import GridView

__all__ = ["Cell", "CellPlot", "GridView", "TensorRow"]
