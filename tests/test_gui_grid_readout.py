"""The value readout on hover (issue 13 item 11.1), real window offscreen, real workers: a mouse
move over a values plot names the element under the cursor and its value in every mode, read from
the run's gradients; a move off the data hides it."""

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import move_mouse, shown_round_ste  # noqa: E402
from PySide6.QtCore import QPoint, QPointF  # noqa: E402

from gradviz.plots.ticks import fmt  # noqa: E402
from gradviz.qt.grid.readout import cell_text  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture
def ste(qtbot, make_window, settings, examples_dir):
    return shown_round_ste(qtbot, make_window, settings, [examples_dir / "tutorial_torch.py"])


def _hover(qtbot, row, cell, x: float, y: float) -> None:
    scene = cell.slot.vb.mapViewToScene(QPointF(x, y))
    pos = row.canvas.mapFromScene(scene)
    move_mouse(qtbot, row, QPoint(pos.x(), pos.y()))


def test_hover_over_values_names_element_and_each_mode(qtbot, ste):
    grid = ste.grid
    grid.set_view("x", "values")
    row = grid.rows["x"]
    cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "custom"))
    qtbot.waitUntil(lambda: cell.slot.vb.width() > 50)
    t = grid.results["torch"].tensor("x")
    n = t.grads["custom"].size
    for i in (7, n - 3):  # x rounds to the nearest element
        _hover(qtbot, row, cell, i + 0.3, 0.5)
        want = (
            f"x[{i}] (#{i}): default 0 · custom 1 · "
            f"numeric {fmt(float(t.grads['numeric'].ravel()[i]))}"
        )
        qtbot.waitUntil(lambda want=want: row.readout.text == want)
        assert row.readout.label.isVisible()
        assert row.readout.label.parentItem() is cell.slot.vb
    # the nearest index from x alone: past half an element beyond the last one, no element
    assert cell_text(cell, grid.results, "x", n - 0.6, 0.0).startswith(f"x[{n - 1}] ")
    assert cell_text(cell, grid.results, "x", n - 0.4, 0.0) is None
    assert cell_text(cell, grid.results, "x", -0.6, 0.0) is None
    above = cell.slot.vb.sceneBoundingRect().topLeft() + QPointF(20, -6)  # the plot's title
    pos = row.canvas.mapFromScene(above)
    move_mouse(qtbot, row, QPoint(pos.x(), pos.y()))
    qtbot.waitUntil(lambda: row.readout.text == "")
    assert not row.readout.label.isVisible()


def test_hover_over_histogram_gives_bin_and_count(qtbot, ste):
    grid = ste.grid
    grid.set_view("x", "histogram")
    row = grid.rows["x"]
    cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "custom"))
    qtbot.waitUntil(lambda: cell.slot.vb.width() > 50)
    edges, counts = cell.data["edges"], cell.data["counts"]
    b = int(counts.argmax())
    _hover(qtbot, row, cell, (edges[b] + edges[b + 1]) / 2, 0.0)
    want = f"[{fmt(float(edges[b]))}, {fmt(float(edges[b + 1]))}): {int(counts[b])}"
    qtbot.waitUntil(lambda: row.readout.text == want)
    assert int(counts[b]) == t_size(grid)  # custom grad of round_ste: all ones


def t_size(grid) -> int:
    return grid.results["torch"].tensor("x").grads["custom"].size


def test_heatmap_readout_names_the_block_of_a_reduced_map():
    import numpy as np

    from gradviz.plots import series as S
    from gradviz.plots.description import Panel
    from gradviz.qt.grid.cell import Cell

    a = np.zeros((10, 12))
    a[3, 5] = -7.0  # the block's largest magnitude, signed
    a[2, 4] = 2.0
    small = S.heatmap(a)
    big = S.heatmap(a, max_side=5)  # 2x3 elements per cell
    for hm, want in ((small, "row 3, col 5: -7"), (big, "rows 2–3, cols 3–5: largest |g| -7")):
        panel = Panel("heatmap", "", "", "", "#000", "solid", "torch", "custom", heatmap=hm)
        cell = Cell(
            "torch", "custom", None, True, panel=panel, data={"image": hm.data, "block": hm.block}
        )
        r, c = 3 // hm.block[0], 5 // hm.block[1]
        assert cell_text(cell, {}, "w", c + 0.5, r + 0.5) == want
        assert cell_text(cell, {}, "w", -0.5, r + 0.5) is None


def test_readout_wider_than_its_plot_wraps_inside_it(qtbot, ste):
    """At 1000x700 the plots are ~100 px wide: the readout wraps inside the plot instead of
    running off its left edge, where the plot clipped the element's name."""
    ste.resize(1000, 700)
    grid = ste.grid
    grid.set_view("x", "values")
    row = grid.rows["x"]
    cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "custom"))
    qtbot.waitUntil(lambda: 40 < cell.slot.vb.width() < 200)
    _hover(qtbot, row, cell, 7.3, 0.5)
    qtbot.waitUntil(
        lambda: row.readout.text.startswith("x[7] (#7): default 0 · custom 1 · numeric")
    )
    label, plot = row.readout.label.sceneBoundingRect(), cell.slot.vb.sceneBoundingRect()
    assert label.left() >= plot.left() - 0.5 and label.right() <= plot.right() + 0.5, (label, plot)


def test_readout_sits_in_the_corner_away_from_the_hovered_point(qtbot, ste):
    """The readout covered the top of the plot and the data it described (walkthrough 11b): it
    goes to the corner diagonally away from the cursor, inside the plot, off the hovered point."""
    grid = ste.grid
    grid.set_view("x", "values")
    row = grid.rows["x"]
    cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "custom"))
    vb = cell.slot.vb
    n = cell.data["n"]
    qtbot.waitUntil(lambda: vb.width() > 50 and vb.viewRange()[0][1] >= n - 1)
    (x0, x1), (y0, y1) = vb.viewRange()
    near_top, near_bottom = y1 - 0.1 * (y1 - y0), y0 + 0.1 * (y1 - y0)
    # (element, y of the cursor): top right, bottom left, top left, bottom right
    for i, y in ((n - 3, near_top), (2, near_bottom), (2, near_top), (n - 3, near_bottom)):
        row.readout.hide()
        _hover(qtbot, row, cell, i + 0.2, y)
        # about x[i]: at under a pixel per element the pixel may land on a neighbour
        qtbot.waitUntil(lambda: row.readout.text.startswith("x["))
        label, plot = row.readout.label.sceneBoundingRect(), vb.sceneBoundingRect()
        cursor = vb.mapViewToScene(QPointF(i + 0.2, y))
        assert not label.contains(cursor), (i, y, label, cursor)
        # the label is in the other half of the plot, both ways
        assert (label.center().x() < plot.center().x()) == (cursor.x() > plot.center().x())
        assert (label.center().y() < plot.center().y()) == (cursor.y() > plot.center().y())
        assert plot.contains(label.adjusted(0.5, 0.5, -0.5, -0.5)), (label, plot)
