"""The window's flow chart of a `stack` run: the flow figure description (gradviz.plots.flow)
drawn by gradviz.qt.export.flow at the widget's size, the same code that writes the exported files."""
from __future__ import annotations

from typing import Optional

from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QSizePolicy, QSplitter, QWidget

from gradviz.plots.flow import FlowFigure
from gradviz.qt.theme import figure_ink

PREFERRED_HEIGHT = 200          # px: title, legend and one plot per framework still read


class FlowView(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.figure: Optional[FlowFigure] = None
        self.setMinimumHeight(PREFERRED_HEIGHT)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)

    def set_figure(self, figure: Optional[FlowFigure]) -> None:
        """Show `figure`; None hides the view (the shown op did not run the stack graph)."""
        if figure == self.figure:
            return
        self.figure = figure
        appears = figure is not None and self.isHidden()
        self.setVisible(figure is not None)
        split = self.parentWidget()
        if appears and isinstance(split, QSplitter) and split.count() == 2:
            # as small as it reads: the rows below are what a stack run has many of (shown
            # again, the splitter gave it 330 of 620 px at 1500x950: one row and a bit left)
            total = sum(split.sizes())
            if total > PREFERRED_HEIGHT:
                split.setSizes([PREFERRED_HEIGHT, total - PREFERRED_HEIGHT])
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
