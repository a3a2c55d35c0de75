"""PDF: one page of exactly the figure's size (1 layout unit = 1/96 inch), vector output."""
from __future__ import annotations

from gradviz.qt.export.app import ensure_app
from gradviz.qt.export.painter import paint_device

SUFFIX = ".pdf"


def write(path: str, width: int, height: int, paint, title: str, description: str,
          scale: float = 2.0) -> None:
    ensure_app()
    from PySide6 import QtCore, QtGui
    pdf = QtGui.QPdfWriter(path)
    pdf.setResolution(96)
    pdf.setPageSize(QtGui.QPageSize(QtCore.QSizeF(width * 0.75, height * 0.75),
                                    QtGui.QPageSize.Unit.Point, "gradviz",
                                    QtGui.QPageSize.SizeMatchPolicy.ExactMatch))
    pdf.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
    pdf.setTitle(title)
    pdf.setCreator("gradviz")
    paint_device(pdf, lambda p: paint(p, False), "PDF")
    del pdf                                       # flush and close the file
