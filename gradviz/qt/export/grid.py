"""The grid figure to an image or a file: the description (gradviz.plots.figure) drawn by
GridPainter at the export layout. Works headless (the CLI's --plot): see app.py. Curves arrive
already decimated and scatter points are thinned to one per output pixel, so a 1M-element grid
gives an SVG of a few hundred KiB in about a second."""
from __future__ import annotations

from typing import Optional, Sequence

from gradviz.plots import figure as F
from gradviz.qt.export.files import format_of, write_painted
from gradviz.qt.export.grid_painter import GridPainter
from gradviz.qt.export.layout import layout
from gradviz.qt.export.png import white_image


def render_image(fig: F.Figure, scale: float = 2.0):
    """The figure as a QImage, `scale` pixels per layout unit."""
    lay = layout(fig)
    return white_image(lay.width, lay.height, scale, lambda p: GridPainter(p, raster=True).draw(fig, lay))


def save_figure(fig: F.Figure, path: str, scale: float = 2.0) -> str:
    """Write `fig` to `path` (.png, .svg or .pdf, from the suffix), atomically. Returns the path."""
    format_of(path)
    lay = layout(fig)
    return write_painted(path, lay.width, lay.height,
                         lambda p, raster: GridPainter(p, raster=raster).draw(fig, lay),
                         fig.title, f"gradviz {fig.view} grid: {fig.subtitle}", scale)


def save_grid(results: Sequence, path: str, *, comparisons, view: str = "values",
              title: Optional[str] = None, row_views=None, log_scale: bool = False) -> str:
    """Build the grid of `results` with the verdicts of `comparisons` (the analysis the caller
    already made; None: no verdicts shown) and save it (the CLI's --plot; `log_scale`: its
    --log-scale, values and difference panels as log10 |g|)."""
    format_of(path)
    return save_figure(F.build_figure(results, view, comparisons, title=title, row_views=row_views,
                                      log_scale=log_scale), path)
