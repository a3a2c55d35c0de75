"""The grid's header (title, subtitle, legend) held at the left edge of the grid's viewport, as
wide as the viewport: the rows scroll sideways under a frozen header, like their own headers
(TensorRow.pin). It scrolls up and down with the rows."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractScrollArea, QLabel, QWidget


class PinnedHeader(QWidget):
    """The holder of `label` in the grid's body: the label is placed, not laid out."""

    def __init__(self, label: QLabel, area: QAbstractScrollArea, inset: int) -> None:
        super().__init__()
        self.label, self.area, self.inset = label, area, inset
        label.setParent(self)
        self.offset = 0

    def pin(self, offset: int) -> None:
        self.offset = max(int(offset), 0)
        self.place()

    def place(self) -> None:
        """The label at the viewport's width (it wraps there), the holder as tall as it."""
        w = max(self.area.viewport().width() - 2 * self.inset, 40)
        h = self.label.heightForWidth(w)
        h = h if h > 0 else self.label.sizeHint().height()
        self.label.setGeometry(self.offset, 0, w, h)
        if self.height() != h or self.minimumHeight() != h:
            self.setFixedHeight(h)

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self.place()
