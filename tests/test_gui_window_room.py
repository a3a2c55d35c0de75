"""Issue 28 on the real window (offscreen, real workers) at 1500x950 and 1000x700: the grid shows
two whole rows, tick labels included (at 1000x700 the horizontal scroll bar took the second row's
x tick labels), and a stack run's flow chart above it has a data area that reads (it had ~40 px),
its title whole and its hover readout working."""

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import keys_of, run_keys  # noqa: E402
from PySide6.QtCore import QPoint, QRect  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gradviz.qt.export.flow import MARGIN, flow_layout  # noqa: E402
from gradviz.qt.export.layout import text_w  # noqa: E402
from gradviz.qt.flow_view import MIN_HEIGHT, PREFERRED_HEIGHT  # noqa: E402

pytestmark = pytest.mark.gui
SIZES = [(1500, 950), (1000, 700)]
# the least data height of a flow chart at each size: what two whole rows leave it
FLOW_DATA = {(1500, 950): 100, (1000, 700): 45}


@pytest.fixture
def stack_run(qtbot, make_window, corpus_dir):
    """sign_ste run as a stack in torch and TF: six columns, wider than the grid at 1000x700."""
    win = make_window(
        [str(corpus_dir / "flow" / "flow_torch.py"), str(corpus_dir / "flow" / "flow_tf.py")]
    )
    panel = win.settings_panel
    panel.graph.setCurrentIndex(panel.graph.findData("stack"))
    panel.depth.setValue(3)
    panel.shape.setText("16")
    run_keys(qtbot, win, keys_of(win, "sign_ste"))
    win.tree.select_pair("sign_ste")
    win.show_pair("sign_ste")
    return win


@pytest.fixture
def op_run(qtbot, make_window, examples_dir):
    win = make_window(
        [str(examples_dir / "tutorial_torch.py"), str(examples_dir / "tutorial_tf.py")]
    )
    run_keys(qtbot, win, keys_of(win, "round_ste"))
    win.tree.select_pair("round_ste")
    win.show_pair("round_ste")
    return win


def _resized(qtbot, win, w: int, h: int) -> None:
    """Resize and wait until the splitters and the grid are laid out for good (the window fits
    its splitters on a timer after the resize, and the plots' axes take their width when first
    painted)."""
    win.resize(w, h)
    qtbot.waitUntil(lambda: win.width() == w and win.height() == h)
    seen = []

    def steady() -> bool:
        QApplication.processEvents()
        rows = list(win.grid.rows.values())[:2]
        seen.append(
            (
                tuple(win.flow_split.sizes()),
                win.grid.viewport().size().toTuple(),
                tuple(
                    c.slot.vb.sceneBoundingRect().toRect().getRect() for r in rows for c in r.cells
                ),
            )
        )
        return len(seen) >= 4 and seen[-1] == seen[-2] == seen[-3] == seen[-4]

    qtbot.waitUntil(steady)


def _tick_label_rects(axis):
    """The tick labels the axis draws now, in its own coordinates."""
    img = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(img)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [rect for rect, _flags, _text in specs[2]]


def _assert_two_whole_rows(win) -> None:
    grid = win.grid
    grid.verticalScrollBar().setValue(0)
    QApplication.processEvents()
    port = QRect(QPoint(0, 0), grid.viewport().size())
    rows = list(grid.rows.values())
    assert len(rows) >= 2
    for row in rows[:2]:
        box = QRect(row.mapTo(grid.viewport(), QPoint(0, 0)), row.size())
        # whole from top to bottom (a row wider than the grid scrolls sideways)
        assert 0 <= box.top() and box.bottom() <= port.bottom(), (row.name, port, box)
        labels = 0
        for cell in row.cells:
            if not cell.has_data:
                continue
            for side in ("bottom", "left"):
                axis = cell.plot.getAxis(side)
                for rect in _tick_label_rects(axis):
                    scene = axis.mapRectToScene(rect)
                    on_canvas = row.canvas.mapFromScene(scene).boundingRect()
                    in_port = QRect(
                        row.canvas.mapTo(grid.viewport(), on_canvas.topLeft()), on_canvas.size()
                    )
                    assert 0 <= in_port.top() and in_port.bottom() <= port.bottom(), (
                        row.name,
                        cell.mode,
                        side,
                        port,
                        in_port,
                    )
                    in_row = QRect(row.canvas.mapTo(row, on_canvas.topLeft()), on_canvas.size())
                    assert row.rect().contains(in_row), (row.name, side, row.rect(), in_row)
                    labels += 1
        assert labels >= 4, row.name  # some tick labels were looked at


@pytest.mark.parametrize("size", SIZES)
def test_two_whole_rows_with_their_tick_labels(qtbot, op_run, size):
    _resized(qtbot, op_run, *size)
    _assert_two_whole_rows(op_run)


@pytest.mark.parametrize("size", SIZES)
def test_a_stack_runs_flow_chart_reads_and_leaves_two_whole_rows(qtbot, stack_run, size):
    win = stack_run
    _resized(qtbot, win, *size)
    view = win.flow_view
    assert view.isVisible()
    if size == (1000, 700):  # the case the scroll bar cut: six columns wider than the grid
        assert win.grid.horizontalScrollBar().isVisible()
    _assert_two_whole_rows(win)
    assert MIN_HEIGHT <= view.height() <= PREFERRED_HEIGHT
    lay = flow_layout(view.figure, view.width(), view.height())
    assert len(lay.plots) == 2
    for plot in lay.plots:
        assert plot.h >= FLOW_DATA[size], (size, plot)
        assert plot.bottom + 28 <= view.height()  # ticks and the x label's line under it
    # the title on its line whole, the legend after it (at 10 px at the least)
    assert lay.compact and text_w(view.figure.title, 10, True) <= (view.width() - 2 * MARGIN) / 2
    assert view.toolTip() == view.figure.subtitle  # what a compact chart leaves out
    # the hover readout: the norms of the layer under the mouse, clear of the charts
    plot = lay.plots[1]
    qtbot.mouseMove(view, QPoint(int(plot.x + plot.w / 2), int(plot.y + plot.h / 2)))
    qtbot.waitUntil(view.readout.isVisible)
    assert view.readout.text().startswith(f"{view.figure.charts[1].title}, layer 2 (h2): ")
    box = view.readout.geometry()
    assert QRect(QPoint(0, 0), view.size()).contains(box)
    for c in lay.charts:  # in the legend's line, above every chart's title and data
        assert box.bottom() < c.y
    qtbot.mouseMove(view, QPoint(2, 2))
    qtbot.waitUntil(lambda: not view.readout.isVisible())
