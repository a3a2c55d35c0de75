"""Tooltips in the grid (issue 28, item 2): the row's verdicts and explanations are the tooltip
of the row's header, never of its plots: resting on a plot showed a ~1190 px two-line tooltip
over the data and the hover readout. Real window offscreen, real workers; the ToolTip events are
sent as Qt sends them (to the widget under the mouse, passed up to its parents until one shows
a tip)."""

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import shown_round_ste  # noqa: E402
from PySide6.QtCore import QEvent, QPoint  # noqa: E402
from PySide6.QtGui import QHelpEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

pytestmark = pytest.mark.gui


def _tip_at(widget, pos: QPoint) -> str:
    """The tooltip Qt shows for a rest at `pos` of `widget` ("" for none)."""
    QToolTip.hideText()
    QApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, pos, widget.mapToGlobal(pos)))
    return QToolTip.text() if QToolTip.isVisible() else ""


def test_a_rest_on_a_plot_shows_no_tooltip_the_header_shows_the_verdicts(
    qtbot, make_window, settings, examples_dir
):
    win = shown_round_ste(qtbot, make_window, settings, [examples_dir / "tutorial_torch.py"])
    row = win.grid.rows["x"]
    qtbot.waitUntil(lambda: bool(row.head.toolTip()))
    viewport = row.canvas.viewport()
    # the middle of every plot with data, and the gaps between them
    for slot in row.plots[: row.used]:
        centre = row.canvas.mapFromScene(slot.item.sceneBoundingRect().center())
        assert _tip_at(viewport, centre) == "", "a tooltip over a plot"
    assert _tip_at(viewport, QPoint(2, viewport.height() // 2)) == ""
    # the header (name, role and shape, verdicts) says the verdicts and why
    tip = _tip_at(row.verdicts, QPoint(4, 4))
    assert tip == row.head.toolTip() and tip.startswith("torch: surrogate — ")
    assert _tip_at(row.title, QPoint(2, 2)) == tip
    QToolTip.hideText()
