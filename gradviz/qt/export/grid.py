"""The grid figure to an image or a file: the description (gradviz.plots.figure) drawn by
GridPainter at the export layout. Works headless (the CLI's --plot): see app.py. Curves arrive
already decimated and scatter points are thinned to one per output pixel, so a 1M-element grid
gives an SVG of a few hundred KiB in about a second."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gradviz.plots import figure as F
from gradviz.qt.export.files import format_of, write_pages, write_painted
from gradviz.qt.export.grid_painter import GridPainter
from gradviz.qt.export.layout import layout
from gradviz.qt.export.png import white_image


def render_image(fig: F.Figure, scale: float = 2.0):
    """The figure as a QImage, `scale` pixels per layout unit."""
    lay = layout(fig)
    return white_image(
        lay.width, lay.height, scale, lambda p: GridPainter(p, raster=True).draw(fig, lay)
    )


# A PDF page at most this tall for the figure's width (A4's portrait ratio): a 34-row stack grid
# was one page ~9000 units tall, which viewers shrink to a strip and printers cut
PAGE_RATIO = 2**0.5


def pdf_pages(fig: F.Figure) -> list[F.Figure]:
    """`fig` as figures of whole rows, each with the title (page k of n), subtitle and legend,
    none taller than PAGE_RATIO times the figure's width (one row at least)."""
    limit = layout(fig).width * PAGE_RATIO
    chunks, start = [], 0
    n = len(fig.rows)
    while start < n:
        end = start + 1
        while end < n and layout(_rows(fig, start, end + 1)).height <= limit:
            end += 1
        chunks.append((start, end))
        start = end
    if len(chunks) <= 1:
        return [fig]
    return [
        replace(_rows(fig, a, b), title=f"{fig.title} (page {k} of {len(chunks)})")
        for k, (a, b) in enumerate(chunks, 1)
    ]


def _rows(fig: F.Figure, a: int, b: int) -> F.Figure:
    return replace(fig, rows=fig.rows[a:b], panels=fig.panels[a:b])


def save_figure(fig: F.Figure, path: str, scale: float = 2.0) -> str:
    """Write `fig` to `path` (.png, .svg or .pdf, from the suffix), atomically; a PDF in pages
    of whole rows (pdf_pages). Returns the path."""
    if format_of(path) == ".pdf":
        pages = []
        for page in pdf_pages(fig):
            lay_p = layout(page)
            pages.append(
                (
                    lay_p.width,
                    lay_p.height,
                    lambda p, raster, f=page, lp=lay_p: GridPainter(p, raster=raster).draw(f, lp),
                )
            )
        return write_pages(path, pages, fig.title)
    lay = layout(fig)
    return write_painted(
        path,
        lay.width,
        lay.height,
        lambda p, raster: GridPainter(p, raster=raster).draw(fig, lay),
        fig.title,
        f"gradviz {fig.view} grid: {fig.subtitle}",
        scale,
    )


def save_grid(
    results: Sequence,
    path: str,
    *,
    comparisons,
    view: str = "values",
    title: str | None = None,
    row_views=None,
    log_scale: bool = False,
) -> str:
    """Build the grid of `results` with the verdicts of `comparisons` (the analysis the caller
    already made; None: no verdicts shown) and save it (the CLI's --plot; `log_scale`: its
    --log-scale, values and difference panels as log10 |g|)."""
    format_of(path)
    return save_figure(
        F.build_figure(
            results, view, comparisons, title=title, row_views=row_views, log_scale=log_scale
        ),
        path,
    )
