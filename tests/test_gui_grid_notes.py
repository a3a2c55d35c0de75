"""The plots' corner notes ("200 elements", "max |custom − numeric| = …") in the real window,
offscreen, real workers (issue 13 item 6, seen in the walkthrough): a note never hides the drawn
points (it sat on a gradient of zeros, and on half of a 'vs input' plot), it stays one label per
plot however often the op is re-run, and the hover readout takes its place while it is shown and
goes when the mouse leaves the plots."""

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


def _drawn_points_under(cell, label) -> int:
    """How many of the cell's drawn points (the data it shows, in scene coordinates) lie under
    the label."""
    vb = cell.slot.vb
    box = label.sceneBoundingRect()
    xs, ys = cell.data["x"], cell.data["y"]
    return sum(
        1 for x, y in zip(xs, ys) if box.contains(vb.mapViewToScene(QPointF(float(x), float(y))))
    )


def _settled(qtbot, cell) -> None:
    """Wait until the plot is laid out for good (its axes take their width once their tick
    labels are painted, which moves the plot) and its note placed."""
    label = cell.slot.notes["note"]
    seen = []

    def steady() -> bool:
        QApplication.processEvents()
        seen.append((cell.slot.vb.sceneBoundingRect(), tuple(map(tuple, cell.slot.vb.viewRange()))))
        return len(seen) >= 3 and seen[-1] == seen[-2] == seen[-3] and cell.slot.vb.width() > 50

    qtbot.waitUntil(steady)
    assert label.corner is not None


@pytest.mark.parametrize("view", ["values", "vs_input"])
def test_notes_keep_clear_of_the_drawn_points(qtbot, ste, view):
    grid = ste.grid
    grid.set_view("x", view)
    row = grid.rows["x"]
    # round_ste's x: default and numeric are 0 everywhere (the bottom of the row's 0..1 axis,
    # where the note used to sit), custom is 1 everywhere (the top)
    cells = [c for c in row.cells if c.has_data and "x" in c.data and "note" in c.slot.notes]
    assert {c.mode for c in cells} >= {"default", "custom", "numeric"}
    for cell in cells:
        _settled(qtbot, cell)
        label = cell.slot.notes["note"]
        assert label.isVisible()
        assert _drawn_points_under(cell, label) == 0, (cell.framework, cell.mode, label.corner)
        assert cell.slot.vb.sceneBoundingRect().contains(label.sceneBoundingRect())
    zeros = next(c for c in cells if (c.framework, c.mode) == ("torch", "default"))
    ones = next(c for c in cells if (c.framework, c.mode) == ("torch", "custom"))
    assert zeros.slot.notes["note"].corner.startswith("top")
    assert ones.slot.notes["note"].corner.startswith("bottom")


def test_a_zoom_moves_the_note_off_the_data(qtbot, ste):
    row = ste.grid.rows["x"]
    cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "default"))
    _settled(qtbot, cell)
    assert cell.slot.notes["note"].corner.startswith("top")
    cell.plot.vb.setYRange(-0.1, 0.0, padding=0)  # the zeros now run along the top
    qtbot.waitUntil(lambda: cell.slot.notes["note"].corner.startswith("bottom"))
    assert _drawn_points_under(cell, cell.slot.notes["note"]) == 0


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
        texts = [label.textItem.toPlainText() for label, _ in slot.corners]
        assert texts == ["200 elements"], texts  # ...with its one note
        labels = [
            i for i in slot.vb.childItems() if i.__class__.__name__ == "TextItem" and i.isVisible()
        ]
        assert len(labels) == 1


def test_readout_takes_the_notes_place_and_goes_when_the_mouse_leaves(qtbot, ste):
    row = ste.grid.rows["x"]
    cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "custom"))
    other = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "numeric"))
    _settled(qtbot, cell)
    note = cell.slot.notes["note"]
    i = _hover_near(qtbot, row, cell, 100.3, 0.5)
    qtbot.waitUntil(lambda: row.readout.text.startswith(f"x[{i}]"))
    assert row.readout.label.isVisible() and not note.isVisible()
    assert other.slot.notes["note"].isVisible()  # only the hovered plot's note gives way
    _settled(qtbot, other)
    _hover_near(qtbot, row, other, 50.3, 0.5)
    qtbot.waitUntil(
        lambda: row.readout.label.parentItem() is other.slot.vb and bool(row.readout.text)
    )
    assert note.isVisible() and not other.slot.notes["note"].isVisible()
    # the mouse leaves the canvas (over the row's header): no move reaches the scene, the
    # viewport gets a Leave
    qtbot.mouseMove(row.view_box, QPoint(5, 5))
    QApplication.sendEvent(row.canvas.viewport(), QEvent(QEvent.Type.Leave))
    qtbot.waitUntil(lambda: row.readout.text == "")
    assert not row.readout.label.isVisible()
    assert note.isVisible() and other.slot.notes["note"].isVisible()
