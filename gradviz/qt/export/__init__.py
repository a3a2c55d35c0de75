"""Figures to files, one module per format (png, svg, pdf) over a shared layout and painter, as
pyqtgraph's exporters are one class each:

    app.py           the Qt application fonts need (offscreen when there is no display)
    layout.py        where things go in an exported grid figure; ticks and number formats
    painter.py       QPainter with gradviz's pens, text and polylines (grid and flow share it)
    grid_painter.py  the grid figure description drawn with it
    flow.py          the flow chart of a stack run (also drawn in the window by qt/flow_view.py)
    png.py, svg.py, pdf.py   one writer per format
    files.py         format by suffix, atomic write (gradviz.atomic_file)
    grid.py          render_image / save_figure / save_grid of a grid figure
"""

from gradviz.qt.export.files import FORMATS, format_of
from gradviz.qt.export.flow import paint_flow, render_flow_image, save_flow_figure
from gradviz.qt.export.grid import render_image, save_figure, save_grid

__all__ = [
    "FORMATS",
    "format_of",
    "paint_flow",
    "render_flow_image",
    "render_image",
    "save_figure",
    "save_flow_figure",
    "save_grid",
]
