"""A plot's notes ("200 elements", "⚠ 3 NaN"), on a line of their own under its x axis, as the
exports write them under a plot: outside the data area, so they never cover a point (placed in the
emptiest corner of the data, they still sat on dense data, issue 28). Too long for the plot's
width, a note is elided and whole in the line's tooltip. Also the centred message of a plot with
nothing to draw, which has no data to cover."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QSizeF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QTextOption
from PySide6.QtWidgets import QGraphicsSimpleTextItem, QSizePolicy

from gradviz.qt.grid.axis import small_font
from gradviz.qt.theme import surface

NOTE_ROW = 4  # the plot's layout row under its bottom axis (0 title, 1 top axis, 2 data, 3 bottom)
ROLES = ("warn", "note")  # in the line's order: a warning reads first
GAP = 8.0  # pixels between a warning and the note
MIN_PART = 30.0  # narrower than this, a part is left to the tooltip


class NoteLine(pg.GraphicsWidget):
    """The plot's notes, one line tall whether or not it says anything (the data areas of a
    row's plots stay level), as wide as the plot's layout gives it and never asking for more."""

    def __init__(self, under=None, parent=None):
        super().__init__(parent)
        self.under = under  # the data area (a sibling in the plot's layout) it centres under
        self._font = small_font(7)
        self._height = float(QFontMetricsF(self._font).height()) + 2
        self.texts: dict[str, tuple[str, str]] = {}  # role -> (text, colour)
        self.items: dict[str, QGraphicsSimpleTextItem] = {}
        for role in ROLES:
            item = QGraphicsSimpleTextItem(self)
            item.setFont(self._font)
            self.items[role] = item
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setMinimumSize(0, self._height)
        self.setMaximumHeight(self._height)

    def sizeHint(self, which, constraint=None):
        if which == Qt.SizeHint.MaximumSize:
            return QSizeF(1e6, self._height)
        return QSizeF(0, self._height)

    def setGeometry(self, rect):
        super().setGeometry(rect)
        self._lay_out()  # the layout moves it with its plot: centred and elided anew

    def set(self, role: str, text: str, color: str) -> None:
        """The `role` note says `text` ("" or None: no such note) in `color`."""
        if text:
            if self.texts.get(role) == (text, color):
                return
            self.texts[role] = (text, color)
        elif self.texts.pop(role, None) is None:
            return
        self._lay_out()

    def clear(self) -> None:
        if self.texts:
            self.texts = {}
            self._lay_out()

    def text(self) -> str:
        """Every note, whole: the line's tooltip."""
        return "   ".join(self.texts[r][0] for r in ROLES if r in self.texts)

    def shown(self) -> str:
        """What the line shows now (elided to its width)."""
        return "   ".join(
            self.items[r].text() for r in ROLES if r in self.texts and self.items[r].isVisible()
        )

    def _lay_out(self) -> None:
        metrics = QFontMetricsF(self._font)
        room = max(0.0, self.size().width() - 4)
        parts = [r for r in ROLES if r in self.texts]
        widths = {r: metrics.horizontalAdvance(self.texts[r][0]) for r in parts}
        total = sum(widths.values()) + GAP * max(0, len(parts) - 1)
        centre = room / 2 + 2
        if self.under is not None:
            centre = self.under.geometry().center().x() - self.geometry().x()
        # centred under the data when it all fits, else from the line's left
        x = min(max(2.0, centre - total / 2), max(2.0, room + 2 - total))
        for role in ROLES:
            item = self.items[role]
            if role not in parts:
                item.hide()
                continue
            text, color = self.texts[role]
            left = room - (x - 2.0)
            if left < MIN_PART and len(parts) > 1:
                item.hide()
                continue
            shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, left)
            item.setText(shown)
            item.setBrush(QBrush(QColor(color)))
            item.setPos(x, 1)
            item.show()
            x += metrics.horizontalAdvance(shown) + GAP
        self.setToolTip(self.text())


def centred_wrap():
    opt = QTextOption(Qt.AlignmentFlag.AlignHCenter)
    opt.setWrapMode(QTextOption.WrapMode.WordWrap)
    return opt


def fit_height(label, text: str, height: float) -> None:
    """The whole text when it fits the height, else as many of its first words as fit, then
    "… (hover for all)": centred and clipped, a long note lost its first line, which says what
    it is ("no gradient: …"). The whole text is the plot's tooltip."""
    doc = label.textItem.document()
    if label.textItem.toPlainText() != text:
        label.setPlainText(text)
    if doc.size().height() <= height:
        return
    words, tail = text.split(), " … (hover for all)"
    lo, hi = 0, len(words)  # the most words that fit, by halving
    while lo < hi:
        mid = (lo + hi + 1) // 2
        label.setPlainText(" ".join(words[:mid]) + tail)
        if doc.size().height() <= height:
            lo = mid
        else:
            hi = mid - 1
    label.setPlainText(" ".join(words[:lo]) + tail)


def message_label(vb, text: str):
    """The note of a plot with nothing to draw, centred on `vb` and wrapped to its width (as it
    is now and after any resize): (TextItem, its resize handler, connected to vb)."""
    label = pg.TextItem(text, color=surface("message"), anchor=(0.5, 0.5))
    label.setFont(small_font(8))
    label.textItem.document().setDefaultTextOption(centred_wrap())
    label.setParentItem(vb)

    def follow(vb):
        label.setTextWidth(max(40.0, vb.width() - 8))
        fit_height(label, text, vb.height() - 4)
        label.setPos(vb.width() / 2, vb.height() / 2)

    follow(vb)
    vb.sigResized.connect(follow)
    return label, follow
