"""The window's flow chart of a `stack` run: the flow figure description (gradviz.plots.flow)
drawn by gradviz.qt.export.flow at the widget's size, the same code that writes the exported files."""
from __future__ import annotations

from typing import Optional

from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

from gradviz.plots.flow import FlowFigure
from gradviz.qt.theme import figure_ink


class FlowView(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.figure: Optional[FlowFigure] = None
        self.setMinimumHeight(260)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)

    def set_figure(self, figure: Optional[FlowFigure]) -> None:
        """Show `figure`; None hides the view (the shown op did not run the stack graph)."""
        if figure == self.figure:
            return
        self.figure = figure
        self.setVisible(figure is not None)
        self.update()

    def restyle(self) -> None:
        self.update()                           # painted with the scheme's ink: see paintEvent

    def paintEvent(self, ev):
        if self.figure is None:
            return
        # imported here, not at start: the export package is not needed for the first frame
        from gradviz.qt.export.flow import paint_flow
        p = QPainter(self)
        try:
            paint_flow(p, self.figure, self.width(), self.height(), ink=figure_ink())
        finally:
            p.end()
