"""SVG: vector output through QSvgGenerator, 1 layout unit = 1/96 inch. pyqtgraph's own SVG
exporter is not used (huge files, and broken on PySide6 >= 6.11)."""

from __future__ import annotations

from gradviz.qt.export.app import ensure_app
from gradviz.qt.export.painter import paint_device

SUFFIX = ".svg"


def write(
    path: str, width: int, height: int, paint, title: str, description: str, scale: float = 2.0
) -> None:
    ensure_app()
    from PySide6 import QtCore
    from PySide6.QtSvg import QSvgGenerator

    gen = QSvgGenerator()
    gen.setFileName(path)
    gen.setSize(QtCore.QSize(width, height))
    gen.setViewBox(QtCore.QRect(0, 0, width, height))
    gen.setResolution(96)
    gen.setTitle(title)
    gen.setDescription(description)
    paint_device(gen, lambda p: paint(p, False), "SVG")
