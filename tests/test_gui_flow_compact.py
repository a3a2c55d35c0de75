"""The compact flow chart at 1000x700 (issue 28 item 6, real window offscreen, real workers, a
stack run): the hover readout sits in the legend's line, clear of every chart's title, plot,
tick and x-label line, and shows its whole text; each chart's y label is drawn level in the
title line left of the plot, whole (a rotated one was cut at ~55 px of data)."""

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import keys_of, run_keys  # noqa: E402
from PySide6.QtCore import QPoint, QRect  # noqa: E402
from PySide6.QtGui import QColor  # noqa: E402

from gradviz.qt.export.flow import (  # noqa: E402
    COMPACT_LINE_H,
    COMPACT_TICKS_H,
    COMPACT_TITLE_H,
    YLABEL_PX,
    flow_layout,
    y_label,
)
from gradviz.qt.export.layout import text_w  # noqa: E402
from gradviz.qt.theme import figure_ink  # noqa: E402

pytestmark = pytest.mark.gui


def _r(rect) -> QRect:
    return QRect(int(rect.x), int(rect.y), int(rect.w), int(rect.h))


@pytest.fixture
def compact(qtbot, make_window, corpus_dir):
    win = make_window([str(corpus_dir / "flow" / "flow_torch.py")])
    panel = win.settings_panel
    panel.graph.setCurrentIndex(panel.graph.findData("stack"))
    panel.depth.setValue(3)
    panel.shape.setText("16")
    run_keys(qtbot, win, keys_of(win, "sign_ste"))
    win.tree.select_pair("sign_ste")
    win.show_pair("sign_ste")
    view = win.flow_view
    qtbot.waitUntil(view.isVisible)
    win.resize(1000, 700)
    # two whole grid rows first (grid_room.py): the chart is left its compact height
    qtbot.waitUntil(lambda: win.size().toTuple() == (1000, 700) and view.height() < 160)
    lay = flow_layout(view.figure, view.width(), view.height())
    assert lay.compact and 30 <= lay.plots[0].h <= 80, (view.height(), lay.plots[0])
    return view


def test_the_readout_covers_nothing_it_reads(qtbot, compact):
    view = compact
    lay = flow_layout(view.figure, view.width(), view.height())
    for chart, plot in zip(view.figure.charts, lay.plots):
        at = QPoint(int(plot.x + plot.w * 0.8), int(plot.y + plot.h / 2))  # layer 3 of 3
        qtbot.mouseMove(view, at)
        qtbot.waitUntil(
            lambda c=chart: view.readout.isVisible() and view.readout.text().startswith(c.title)
        )
        assert ", layer 3 (h3): " in view.readout.text()
        got = view.readout.geometry()
        # whole: inside the view and as wide as its text
        assert QRect(QPoint(0, 0), view.size()).contains(got), (got, view.size())
        assert got.width() >= view.readout.sizeHint().width()
        for c_box, c_plot in zip(lay.charts, lay.plots):
            title = _r(c_box)
            title.setHeight(COMPACT_TITLE_H)
            data = _r(c_plot)
            below = QRect(
                int(c_box.x),
                int(c_plot.bottom),
                int(c_box.w),
                COMPACT_TICKS_H + COMPACT_LINE_H,
            )  # the ticks and the x label's line
            for part in (title, data, below):
                assert not got.intersects(part), (got, part)


def test_the_y_label_fits_level_in_the_title_line(qtbot, compact):
    view = compact
    lay = flow_layout(view.figure, view.width(), view.height())
    image = view.grab().toImage()
    back = QColor(figure_ink()["background"])
    for chart, box, plot in zip(view.figure.charts, lay.charts, lay.plots):
        text, room, rotated = y_label(chart, box, plot, True)
        assert not rotated and text.startswith("‖") and text.endswith(("‖₂", "‖"))
        assert text_w(text, YLABEL_PX) <= room.w  # whole, not elided
        assert room.right <= plot.x and room.bottom <= plot.y - 6  # clear of plot and top tick
        assert room.x >= box.x
        # it is drawn: ink in its room, nothing but background left of the room
        r = _r(room)
        inked = [
            (x, y)
            for x in range(r.left(), r.right())
            for y in range(r.top(), r.bottom())
            if image.pixelColor(x, y) != back
        ]
        assert len(inked) > 20, (text, r)
