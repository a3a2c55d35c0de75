"""One plot of a grid row, kept across redraws (creating a pyqtgraph plot costs ~30 ms), with the
state gradviz keeps about it: what kind of drawing it shows, its reusable curve, its note line,
its "computing…" cover, its axis links and its context-menu entries. Nothing is stored on the
pyqtgraph item itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyqtgraph as pg

from gradviz.plots.description import COMPUTING, Panel
from gradviz.plots.palette import NAN_COLOR
from gradviz.qt.grid.axis import CompactAxis, small_font
from gradviz.qt.grid.notes import NOTE_ROW, NoteLine, message_label
from gradviz.qt.grid.ysync import unsync_y
from gradviz.qt.theme import framework_color, plot_options, plot_text, surface

# The first of the grid's modules to set up pyqtgraph (after the window's first paint, view.py):
# its defaults for every plot made from now on, on the colour scheme the window shows.
pg.setConfigOptions(antialias=False, **plot_options())

# pyqtgraph gives a title 30 px; its one 9pt line needs 20, and the note line takes the rest
TITLE_ROW_H = 20


def new_plot_item(canvas, col: int) -> pg.PlotItem:
    return canvas.addPlot(
        row=0, col=col, axisItems={"bottom": CompactAxis("bottom"), "left": CompactAxis("left")}
    )


def _disconnect(signal, handler) -> None:
    try:
        signal.disconnect(handler)
    except (RuntimeError, TypeError):
        pass


def _remove(item) -> None:
    item.setParentItem(None)
    if item.scene() is not None:
        item.scene().removeItem(item)


def title_html(panel: Panel) -> str:
    """The plot's title: its framework in the framework's colour (which column group it is of,
    with two or three frameworks side by side), the rest in the mode's colour."""
    fw, sep, rest = panel.title.partition(" · ")
    if not sep or fw != panel.framework:
        return f"<span style='color:{plot_text(panel.color)}; font-size:9pt'>{panel.title}</span>"
    return (
        f"<span style='font-size:9pt'><span style='color:{plot_text(framework_color(fw))}'>"
        f"{fw}</span><span style='color:{plot_text(panel.color)}'> · {rest}</span></span>"
    )


class CellPlot:
    """A pg.PlotItem of a row and what gradviz drew on it."""

    def __init__(self, item: pg.PlotItem):
        self.item = item
        self.kind = None  # what the plot looks like apart from its data: same kind -> setData
        self.curve = None  # the values curve, reusable when the kind stays
        # the notes, under the x axis across the plot's width: never over the data (notes.py)
        self.note_line = NoteLine(under=item.vb)
        item.layout.addItem(self.note_line, NOTE_ROW, 0, 1, 3)
        self.message_item = None  # the note of a plot with nothing to draw, centred on it
        self._message_follow = None
        self.wait_note = None  # the "computing…" cover over a kept curve
        self._wait_follow = None
        self.ysync = None  # handler keeping its y range with the row's (ysync.sync_y)
        self.linked: list | None = None  # first plot of a row: ids of the plots linked to it
        self.ranges = None  # first plot of a row: the (x, y) ranges set last
        self._title = None
        self._styled = False
        self.menu_actions: list = []
        self.colorbar = None  # a heatmap's colour bar, in the plot's layout

    @property
    def vb(self):
        return self.item.vb

    @property
    def notes(self) -> dict:
        """role ("warn", "note") -> the text its note line says."""
        return {role: text for role, (text, _c) in self.note_line.texts.items()}

    def waiting(self) -> bool:
        return self.wait_note is not None and self.wait_note.isVisible()

    # --- look -------------------------------------------------------------------------------------
    def style(self, panel: Panel) -> None:
        html = title_html(panel)
        if self._title != html:  # setTitle lays out HTML: not for nothing
            self.item.setTitle(html)
            self.item.titleLabel.setMaximumHeight(TITLE_ROW_H)
            self.item.layout.setRowFixedHeight(0, TITLE_ROW_H)
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
        """Nothing to draw: the panel's note, centred and wrapped to the plot, on a grey
        background; the note is the tooltip too."""
        self.item.hideAxis("left")
        self.item.hideAxis("bottom")
        self.item.setMouseEnabled(False, False)
        self.vb.setBackgroundColor(surface("empty"))
        self.item.setToolTip(text)
        self.message_item, self._message_follow = message_label(self.vb, text)

    def set_note(self, role: str, text: str | None, color: str) -> None:
        """The plot's `role` note ("warn": a non-finite warning, "note": the panel's info) says
        `text` (None: no such note), on the plot's one note line."""
        self.note_line.set(role, text or "", color)

    def warn(self, text: str) -> None:
        self.set_note("warn", text, plot_text(NAN_COLOR))

    def note(self, text: str) -> None:
        self.set_note("note", text, surface("note"))

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
        self.note_line.clear()
        self.note_line.setOpacity(1.0)
        if self.message_item is not None:
            _disconnect(self.vb.sigResized, self._message_follow)
            _remove(self.message_item)
            self.message_item = self._message_follow = None
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
        """Show or hide the "computing…" cover over a curve kept for the next data (its notes,
        which describe that curve, hide meanwhile)."""
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
                self.note_line.setOpacity(1.0)
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
        self.note_line.setOpacity(0.0)  # a layout keeps room for it: the rows stay level


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
