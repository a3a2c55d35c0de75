"""PDF: pages of exactly the figure's size (1 layout unit = 1/96 inch), vector output; a long
grid comes as several pages (grid.py splits it into figures of whole rows)."""

from __future__ import annotations

from gradviz.qt.export.app import ensure_app
from gradviz.qt.export.painter import paint_device

SUFFIX = ".pdf"


def write(
    path: str, width: int, height: int, paint, title: str, description: str, scale: float = 2.0
) -> None:
    write_pages(path, [(width, height, paint)], title)


def write_pages(path: str, pages, title: str) -> None:
    """pages: (width, height, paint(painter, raster)) per page, each its own size."""
    ensure_app()
    from PySide6 import QtCore, QtGui

    def size(w, h):
        return QtGui.QPageSize(
            QtCore.QSizeF(w * 0.75, h * 0.75),
            QtGui.QPageSize.Unit.Point,
            "gradviz",
            QtGui.QPageSize.SizeMatchPolicy.ExactMatch,
        )

    pdf = QtGui.QPdfWriter(path)
    pdf.setResolution(96)
    pdf.setPageSize(size(*pages[0][:2]))
    pdf.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
    pdf.setTitle(title)
    pdf.setCreator("gradviz")

    paint_device(pdf, lambda p, dev=pdf: _paint_pages(dev, p, pages, size), "PDF")
    del pdf  # flush and close the file


def _paint_pages(pdf, p, pages, size) -> None:
    for i, (w, h, paint) in enumerate(pages):
        if i:
            pdf.setPageSize(size(w, h))  # the next page's size, then the page
            pdf.newPage()
        paint(p, False)
