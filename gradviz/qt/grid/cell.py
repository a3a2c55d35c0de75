"""One plot of a grid row, kept across redraws (creating a pyqtgraph plot costs ~30 ms), with the
state gradviz keeps about it: what kind of drawing it shows, its reusable curve, its corner notes,
its "computing…" cover, its axis links and its context-menu entries. Nothing is stored on the
pyqtgraph item itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyqtgraph as pg

from gradviz.plots.description import COMPUTING, Panel
from gradviz.plots.palette import NAN_COLOR
from gradviz.plots.ticks import fmt, nice_ticks
from gradviz.qt.grid.corners import emptiest_corner
from gradviz.qt.grid.ysync import unsync_y
from gradviz.qt.theme import plot_options, plot_text, surface

# The first of the grid's modules to import pyqtgraph (after the window's first paint, view.py):
# its defaults for every plot made from now on, on the colour scheme the window shows.
pg.setConfigOptions(antialias=False, **plot_options())

_FONTS: dict = {}
NOTE_Z = 500  # corner notes: above the curves, under the "computing…" cover (1000)
NOTE_BACK_ALPHA = 215  # their background: the plot's colour, the data faintly through it
# corners a note prefers, in order, when several are as empty (a warning reads first: top left)
NOTE_ORDER = ("bottom-left", "bottom-right", "top-right", "top-left")
WARN_ORDER = ("top-left", "top-right", "bottom-left", "bottom-right")


class CompactAxis(pg.AxisItem):
    """Tick labels written as the exports write them ("2e5", not "200000" running into
    "400000"), and whole-number ticks where the axis counts cells (heatmaps)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.integer = False
        # pyqtgraph rescales a unitless axis whose values are below 1 ("400" titled "(x0.001)",
        # a log10 |g| of 0.4 read as 400); the exports write the value itself ("4e-4")
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values, scale, spacing):
        strings = [fmt(v * scale) for v in values]
        fit = getattr(self, "_fit", None)  # (major step, pixels per unit): horizontal axes
        if fit is not None and strings and spacing < fit[0]:
            # a minor level's labels only where they all fit (pyqtgraph's own test is the share
            # of the axis its labels fill, which let "100150" through)
            if spacing * fit[1] < max(map(self._label_width, strings)) + LABEL_GAP:
                return []
        return strings

    def tickSpacing(self, minVal, maxVal, size):
        if self.integer:
            self._fit = None  # a reused plot's values view set it
            # a label per ~25 px: a 110 px heatmap of 30 columns showed one tick ("20")
            ticks = nice_ticks(minVal, maxVal, target=max(2, int(size // 25)), integer=True)
            return [(ticks[1] - ticks[0] if len(ticks) > 1 else 1.0, 0.0)]
        levels = super().tickSpacing(minVal, maxVal, size)
        if not levels or self.orientation not in ("bottom", "top") or not maxVal > minVal:
            self._fit = None
            return levels
        # pyqtgraph draws every major label, fitting or not: a narrow zoomed plot read
        # "60 80 100120140". Widen the major step (1, 2, 5 × 10^k) until its labels fit.
        major = levels[0][0]
        wide = major_step_for_labels(major, minVal, maxVal, size, self._label_width)
        self._fit = (wide, size / (maxVal - minVal))
        if wide == major:
            return levels
        return [(wide, 0.0), (wide / (2.5 if _mantissa(wide) == 5 else 2), 0.0)][: len(levels)]

    def _label_width(self, text: str) -> float:
        from PySide6.QtGui import QFontMetricsF

        return QFontMetricsF(self.style.get("tickFont") or small_font()).horizontalAdvance(text)


LABEL_GAP = 6.0  # pixels at least between two tick labels of a horizontal axis


def _mantissa(step: float) -> int:
    import math

    return int(round(step / 10 ** math.floor(math.log10(step) + 1e-9)))


def major_step_for_labels(step: float, lo: float, hi: float, size: float, width) -> float:
    """The smallest of step, then the next 1-2-5 steps, whose tick labels (`width(text)` pixels
    wide, written as fmt writes them) fit between their ticks on an axis of `size` pixels."""
    import math

    per_unit = size / (hi - lo)
    for _ in range(8):
        first = math.ceil(lo / step) * step
        values = [first + i * step for i in range(int((hi - first) / step) + 1)][:40]
        widest = max((width(fmt(v)) for v in values), default=0.0)
        if step * per_unit >= widest + LABEL_GAP or len(values) <= 1:
            return step
        m = _mantissa(step)
        step = step * (2.5 if m == 2 else 2.0)  # 1 -> 2 -> 5 -> 10
    return step


def _centred_wrap():
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QTextOption

    opt = QTextOption(Qt.AlignmentFlag.AlignHCenter)
    opt.setWrapMode(QTextOption.WrapMode.WordWrap)
    return opt


def new_plot_item(canvas, col: int) -> pg.PlotItem:
    return canvas.addPlot(
        row=0, col=col, axisItems={"bottom": CompactAxis("bottom"), "left": CompactAxis("left")}
    )


def small_font(size: int = 7):
    if size not in _FONTS:
        from PySide6.QtGui import QFont

        _FONTS[size] = QFont()
        _FONTS[size].setPointSize(size)
    return _FONTS[size]


def _natural_width(text: str) -> float:
    from PySide6.QtGui import QFontMetricsF

    metrics = QFontMetricsF(small_font(7))
    return max(metrics.horizontalAdvance(line) for line in text.splitlines() or [""]) + 8


def _fit_height(label, text: str, height: float) -> None:
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


def _disconnect(signal, handler) -> None:
    try:
        signal.disconnect(handler)
    except (RuntimeError, TypeError):
        pass


def _remove(item) -> None:
    item.setParentItem(None)
    if item.scene() is not None:
        item.scene().removeItem(item)


class CellPlot:
    """A pg.PlotItem of a row and what gradviz drew on it."""

    def __init__(self, item: pg.PlotItem):
        self.item = item
        self.kind = None  # what the plot looks like apart from its data: same kind -> setData
        self.curve = None  # the values curve, reusable when the kind stays
        self.corners: list = []  # (TextItem, resize handler) of the notes in its corners
        self.notes: dict = {}  # role ("note", "warn") -> its TextItem of self.corners
        self.points = None  # a sample of the drawn (x, y), which notes keep clear of
        self.wait_note = None  # the "computing…" cover over a kept curve
        self._wait_follow = None
        self.ysync = None  # handler keeping its y range with the row's (ysync.sync_y)
        self.linked: list | None = None  # first plot of a row: ids of the plots linked to it
        self.ranges = None  # first plot of a row: the (x, y) ranges set last
        self._title = None
        self._styled = False
        self.menu_actions: list = []
        self.colorbar = None  # a heatmap's colour bar, in the plot's layout
        self.message_item = None  # the note of a plot with nothing to draw (one of corners)

    @property
    def vb(self):
        return self.item.vb

    def waiting(self) -> bool:
        return self.wait_note is not None and self.wait_note.isVisible()

    # --- look -------------------------------------------------------------------------------------
    def style(self, panel: Panel) -> None:
        html = f"<span style='color:{plot_text(panel.color)}; font-size:9pt'>{panel.title}</span>"
        if self._title != html:  # setTitle lays out HTML: not for nothing
            self.item.setTitle(html)
            self._title = html
        if not self._styled:
            self._styled = True
            self.item.showGrid(x=True, y=True, alpha=0.15)
            for ax in ("left", "bottom"):
                # no third tick level: its grid lines are invisible at this size yet double paint time
                self.item.getAxis(ax).setStyle(tickFont=small_font(), maxTickLevel=1)
            self.item.setMenuEnabled(True)
        for ax, text in (("bottom", panel.xlabel), ("left", panel.ylabel)):
            axis = self.item.getAxis(ax)
            if axis.labelText != text:
                # setLabel replaces the label's style: keep the axis text colour (dark mode)
                color = axis.textPen().color().name()
                axis.setLabel(text, **{"font-size": "7pt", "color": color})

    def message(self, text: str) -> None:
        """Nothing to draw: the panel's note, centred and wrapped by Qt to the plot's width (as it
        is now and after any resize), on a grey background; the note is the tooltip too."""
        self.item.hideAxis("left")
        self.item.hideAxis("bottom")
        self.item.setMouseEnabled(False, False)
        self.vb.setBackgroundColor(surface("empty"))
        self.item.setToolTip(text)
        label = pg.TextItem(text, color=surface("message"), anchor=(0.5, 0.5))
        label.setFont(small_font(8))
        label.textItem.document().setDefaultTextOption(_centred_wrap())
        label.setParentItem(self.vb)

        def follow(vb):
            label.setTextWidth(max(40.0, vb.width() - 8))
            _fit_height(label, text, vb.height() - 4)
            label.setPos(vb.width() / 2, vb.height() / 2)

        follow(self.vb)
        self.vb.sigResized.connect(follow)
        self.corners.append((label, follow))
        self.message_item = label

    def set_note(self, role: str, text: str | None, color: str) -> None:
        """The plot's `role` note ("warn": a non-finite warning, "note": the panel's info) says
        `text` (None: no such note). A reused plot keeps its label and only gets the new text: a
        warm re-run added one more label per plot each time."""
        label = self.notes.get(role)
        if not text:
            if label is not None:
                self._drop_corner(label)
                del self.notes[role]
            return
        if label is None:
            label = self._corner(role)
            self.notes[role] = label
        if label.textItem.toPlainText() != text or label.color != pg.mkColor(color):
            label.setText(text, color)
            label.natural = _natural_width(text)
            label.follow(self.vb)

    def _corner(self, role: str):
        # above the data on the plot's background, in the corner with the fewest drawn points
        # (gradviz.qt.grid.corners); wrapped to the plot's width: never cut off
        from PySide6.QtGui import QColor

        back = QColor(surface("plot"))
        back.setAlpha(NOTE_BACK_ALPHA)
        label = pg.TextItem("", fill=pg.mkBrush(back))
        label.setFont(small_font(7))
        label.setZValue(NOTE_Z)
        label.setParentItem(self.vb)
        label.natural = 0.0
        order = WARN_ORDER if role == "warn" else NOTE_ORDER

        def follow(vb, *_args):
            room = max(40.0, vb.width() - 4)  # no wider than its text: less data covered
            label.setTextWidth(room if label.natural > room else -1)
            box = label.boundingRect()
            taken = [
                other.corner
                for r, other in self.notes.items()
                if other is not label
                and getattr(other, "corner", None)
                and (r == "warn" or role != "warn")
            ]
            where = emptiest_corner(
                self.points,
                vb.viewRange(),
                (vb.width(), vb.height()),
                (box.width() + 2, box.height()),
                order,
                taken,
            )
            if getattr(label, "corner", None) != where:
                label.corner = where
                left, top = where.endswith("left"), where.startswith("top")
                label.setAnchor((0 if left else 1, 0 if top else 1))
            label.setPos(
                2 if label.corner.endswith("left") else vb.width() - 2,
                0 if label.corner.startswith("top") else vb.height(),
            )

        label.follow = follow
        label.corner = None
        self.vb.sigResized.connect(follow)
        self.vb.sigRangeChanged.connect(follow)
        self.corners.append((label, follow))
        return label

    def _drop_corner(self, label) -> None:
        for i, (other, follow) in enumerate(self.corners):
            if other is label:
                _disconnect(self.vb.sigResized, follow)
                _disconnect(self.vb.sigRangeChanged, follow)
                _remove(label)
                del self.corners[i]
                return

    def warn(self, text: str) -> None:
        self.set_note("warn", text, plot_text(NAN_COLOR))

    def note(self, text: str) -> None:
        self.set_note("note", text, surface("note"))

    def show_notes(self, on: bool) -> None:
        """Hide the corner notes while the hover readout is over this plot (they overlapped)."""
        if self.waiting():
            return  # the "computing…" cover keeps them hidden
        for label in self.notes.values():
            label.setVisible(on)

    # --- reuse ------------------------------------------------------------------------------------
    def drop_menu_actions(self) -> None:
        menu = self.vb.menu
        for a in self.menu_actions:
            if menu is not None:
                menu.removeAction(a)
        self.menu_actions = []

    def reset(self) -> None:
        """Undo everything a previous fill did, so the plot can be drawn again like a new one."""
        self.item.setXLink(None)
        unsync_y(self)
        self.item.clear()
        self.curve = None
        self.kind = None
        notes = set(map(id, self.notes.values()))
        for label, follow in self.corners:
            _disconnect(self.vb.sigResized, follow)
            if id(label) in notes:  # only notes follow the range too
                _disconnect(self.vb.sigRangeChanged, follow)
            _remove(label)
        self.corners = []
        self.notes = {}
        self.points = None
        self.message_item = None
        self.wait(False)
        self.drop_menu_actions()
        for ax in ("left", "bottom"):
            self.item.showAxis(ax)
        self.item.setMouseEnabled(True, True)
        self.vb.setBackgroundColor(None)
        self.item.invertY(False)
        self.item.enableAutoRange()
        self.item.setToolTip("")
        for ax in ("left", "bottom"):
            axis = self.item.getAxis(ax)
            if getattr(axis, "integer", False):
                axis.integer = False
                axis.picture = None
        if self.colorbar is not None:
            self.item.layout.removeItem(self.colorbar)
            _remove(self.colorbar)
            self.colorbar = None
        self.linked = self.ranges = None

    def wait(self, on: bool) -> None:
        """Show or hide the "computing…" cover over a curve kept for the next data."""
        note, curve = self.wait_note, self.curve
        if not on:
            if note is None:
                return
            if curve is None:  # the plot was reset: the cover goes with it
                _disconnect(self.vb.sigResized, self._wait_follow)
                _remove(note)
                self.wait_note = None
            elif note.isVisible():
                note.hide()
                curve.show()
                for label, _f in self.corners:
                    label.show()
            return
        if note is None:
            note = pg.TextItem(
                COMPUTING,
                color=surface("message"),
                anchor=(0.5, 0.5),
                fill=pg.mkBrush(surface("empty")),
            )
            note.setFont(small_font(8))
            note.setParentItem(self.vb)
            note.setZValue(1000)

            def follow(vb):
                note.setPos(vb.width() / 2, vb.height() / 2)

            self.vb.sigResized.connect(follow)
            follow(self.vb)
            self.wait_note, self._wait_follow = note, follow
        note.show()
        curve.hide()
        for label, _f in self.corners:
            label.hide()


@dataclass
class Cell:
    """What one column of a row shows now: its panel of the figure description and what was
    drawn from it (`data`, read by tests)."""

    framework: str
    mode: str  # "default" | "custom" | "numeric" | "custom~default" | ...
    slot: CellPlot
    has_data: bool
    message: str = ""  # why there is no data (the panel's note)
    data: dict = field(default_factory=dict)
    panel: Panel | None = None

    @property
    def plot(self) -> pg.PlotItem:
        return self.slot.item
