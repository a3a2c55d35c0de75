"""The plots' notes ("200 elements", "N elements, min/max of 800 buckets") in the real window,
offscreen, real workers: a note sits on its own line under the plot's x axis and never covers
plotted data, however dense (issue 28: placed in the emptiest corner of the data it still sat on
dense curves); it stays one note per plot however often the op is re-run, and the hover readout
never hides it (they no longer share the data area) and goes when the mouse leaves the plots."""

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import keys_of, move_mouse, run_keys, shown_round_ste  # noqa: E402
from PySide6.QtCore import QEvent, QPoint, QPointF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture
def ste(qtbot, make_window, settings, examples_dir):
    win = shown_round_ste(
        qtbot,
        make_window,
        settings,
        [examples_dir / "tutorial_torch.py", examples_dir / "tutorial_tf.py"],
    )
    return win


def _hover_near(qtbot, row, cell, x: float, y: float) -> int:
    """Move the mouse to the whole pixel nearest (x, y) of a values plot; returns the element
    under it (at ~0.6 px per element, six plots of 200 elements at 1500 px, the pixel nearest
    to x = 100.3 is element 101's, and no pixel is element 100's)."""
    vb = cell.slot.vb
    pos = row.canvas.mapFromScene(vb.mapViewToScene(QPointF(x, y)))
    move_mouse(qtbot, row, QPoint(pos.x(), pos.y()))
    return int(vb.mapSceneToView(row.canvas.mapToScene(pos)).x() + 0.5)


def _drawn_points_under(cell, rect) -> int:
    """How many of the cell's drawn points (the data it shows, in scene coordinates) lie in the
    scene rect `rect`."""
    vb = cell.slot.vb
    xs, ys = cell.data["x"], cell.data["y"]
    return sum(
        1 for x, y in zip(xs, ys) if rect.contains(vb.mapViewToScene(QPointF(float(x), float(y))))
    )


def _settled(qtbot, cell) -> None:
    """Wait until the plot is laid out for good (its axes take their width once their tick
    labels are painted, which moves the plot) and its note shown."""
    seen = []

    def steady() -> bool:
        QApplication.processEvents()
        seen.append(
            (
                cell.slot.vb.sceneBoundingRect(),
                cell.slot.note_line.sceneBoundingRect(),
                tuple(map(tuple, cell.slot.vb.viewRange())),
            )
        )
        return len(seen) >= 3 and seen[-1] == seen[-2] == seen[-3] and cell.slot.vb.width() > 50

    qtbot.waitUntil(steady)
    assert cell.slot.note_line.shown()


def _note_rects(cell) -> list:
    return [i.sceneBoundingRect() for i in cell.slot.note_line.items.values() if i.isVisible()]


def _assert_clear_of_the_data(cell) -> None:
    """The note's text lies in the plot, under its data area: no drawn point, nor any pixel of
    the area the data is drawn in, is under it."""
    data_area = cell.slot.vb.sceneBoundingRect()
    plot = cell.plot.sceneBoundingRect()
    rects = _note_rects(cell)
    assert rects, (cell.framework, cell.mode)
    for rect in rects:
        assert not rect.intersects(data_area), (cell.framework, cell.mode, rect, data_area)
        assert rect.top() >= data_area.bottom()
        assert plot.contains(rect), (cell.framework, cell.mode, rect, plot)
        if "x" in cell.data:
            assert _drawn_points_under(cell, rect) == 0


@pytest.fixture
def dense(qtbot, make_window, settings, examples_dir):
    """mul_weights on 40,000 elements: x's gradient is the weights, random over -3..3, so every
    values plot is a band of data filling its data area from edge to edge, and the notes the
    long "…, min/max of 800 buckets"."""
    settings.setValue("run/shape", "40000")
    settings.setValue("run/modes", "default,custom,numeric")
    win = make_window(
        [str(examples_dir / "tutorial_torch.py"), str(examples_dir / "tutorial_tf.py")]
    )
    run_keys(qtbot, win, keys_of(win, "mul_weights"))
    win.tree.select_pair("mul_weights")
    win.show_pair("mul_weights")
    return win


@pytest.mark.parametrize("view", ["values", "vs_input", "histogram"])
def test_notes_never_cover_dense_data(qtbot, dense, view):
    grid = dense.grid
    grid.set_view("x", view)
    row = grid.rows["x"]
    cells = [c for c in row.cells if c.has_data and "note" in c.slot.notes]
    assert {(c.framework, c.mode) for c in cells} >= {
        ("torch", "default"),
        ("torch", "custom"),
    }
    dense_seen = []
    for cell in cells:
        _settled(qtbot, cell)
        if view == "values" and cell.panel.series is not None:
            # the long note, elided to the plot's width and whole in its tooltip
            assert cell.slot.notes["note"] == "40,000 elements, min/max of 800 buckets"
            assert cell.slot.note_line.toolTip() == cell.slot.notes["note"]
            # the band of data fills the plot: every drawn point in the data area, reaching
            # near its four edges
            area = cell.slot.vb.sceneBoundingRect()
            drawn = _drawn_points_under(cell, area)
            assert drawn == len(cell.data["x"]), (drawn, len(cell.data["x"]))
            (x0, x1), (y0, y1) = cell.slot.vb.viewRange()
            xs, ys = np.asarray(cell.data["x"]), np.asarray(cell.data["y"])
            assert xs.max() - xs.min() >= 0.95 * (x1 - x0)
            assert ys.max() - ys.min() >= 0.9 * (y1 - y0), (ys.min(), ys.max(), y0, y1)
            dense_seen.append(cell.mode)
        _assert_clear_of_the_data(cell)
        # nothing gradviz wrote sits in the data area (a note was a TextItem in the view box)
        texts = [i for i in cell.slot.vb.childItems() if i.__class__.__name__ == "TextItem"]
        assert not [t for t in texts if t.isVisible()]
    if view == "values":
        assert {"default", "custom"} <= set(dense_seen)


def test_a_zoom_leaves_the_note_under_the_plot(qtbot, dense):
    """The note does not move with the data: a zoom that brings points to any edge of the data
    area leaves it where it was, under the plot."""
    row = dense.grid.rows["x"]
    cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "default"))
    _settled(qtbot, cell)
    before = _note_rects(cell)
    cell.plot.vb.setYRange(-0.1, 0.0, padding=0)
    cell.plot.vb.setXRange(10, 20, padding=0)
    QApplication.processEvents()
    assert _note_rects(cell) == before
    _assert_clear_of_the_data(cell)


def test_rerunning_an_op_keeps_one_note_per_plot(qtbot, ste):
    """A warm re-run reuses the plots; each used to get one more note label per run."""
    row = ste.grid.rows["x"]
    cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "custom"))
    slot = cell.slot
    keys = keys_of(ste, "round_ste")
    for seed in (1, 2, 3):
        ste.settings_panel.seed.setValue(seed)
        run_keys(qtbot, ste, keys)
        ste.show_pair("round_ste")
        cell = next(
            c for c in ste.grid.rows["x"].cells if (c.framework, c.mode) == ("torch", "custom")
        )
        assert cell.slot is slot  # the plot was reused...
        assert slot.notes == {"note": "200 elements"}  # ...with its one note
        notes_in_layout = [
            cell.plot.layout.itemAt(i)
            for i in range(cell.plot.layout.count())
            if cell.plot.layout.itemAt(i).__class__.__name__ == "NoteLine"
        ]
        assert notes_in_layout == [slot.note_line]
        _settled(qtbot, cell)
        assert slot.note_line.shown() == "200 elements"


def test_the_readout_leaves_the_notes_and_goes_when_the_mouse_leaves(qtbot, ste):
    row = ste.grid.rows["x"]
    cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "custom"))
    other = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "numeric"))
    _settled(qtbot, cell)
    i = _hover_near(qtbot, row, cell, 100.3, 0.5)
    qtbot.waitUntil(lambda: row.readout.text.startswith(f"x[{i}]"))
    label = row.readout.label
    assert label.isVisible() and label.parentItem() is cell.slot.vb
    # the readout is in the data area, the note under it: both read, neither covers the other
    assert cell.slot.note_line.isVisible() and cell.slot.note_line.shown() == "200 elements"
    for rect in _note_rects(cell):
        assert not rect.intersects(label.sceneBoundingRect())
    _settled(qtbot, other)
    _hover_near(qtbot, row, other, 50.3, 0.5)
    qtbot.waitUntil(lambda: label.parentItem() is other.slot.vb and bool(row.readout.text))
    assert other.slot.note_line.shown() == "200 elements"
    # the mouse leaves the canvas (over the row's header): no move reaches the scene, the
    # viewport gets a Leave
    qtbot.mouseMove(row.view_box, QPoint(5, 5))
    QApplication.sendEvent(row.canvas.viewport(), QEvent(QEvent.Type.Leave))
    qtbot.waitUntil(lambda: row.readout.text == "")
    assert not label.isVisible()
    assert cell.slot.note_line.shown() == other.slot.note_line.shown() == "200 elements"
