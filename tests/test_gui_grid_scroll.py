"""Getting around the grid (issue 13 items 1 and 3, real window offscreen, real workers): the
wheel scrolls the grid and Ctrl+wheel zooms a plot, a view combo ignores the wheel unless it has
the focus, rows keep one compact height (three tensors visible at 1500x950, no jump when the
numeric column arrives), each row has a "fit" button, and at 1000x700 every column is reachable
through scroll bars."""

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import keys_of, run_keys, shown_round_ste  # noqa: E402
from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

pytestmark = pytest.mark.gui


def _wheel(widget, pos: QPoint, ctrl: bool = False, down: bool = True) -> None:
    ev = QWheelEvent(
        QPointF(pos),
        QPointF(widget.mapToGlobal(pos)),
        QPoint(0, 0),
        QPoint(0, -120 if down else 120),
        Qt.NoButton,
        Qt.ControlModifier if ctrl else Qt.NoModifier,
        Qt.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, ev)


def _centre(row, cell) -> QPoint:
    return row.canvas.mapFromScene(cell.plot.vb.sceneBoundingRect().center())


def _visible_rows(grid) -> list[str]:
    """Rows shown whole in the grid's viewport."""
    out = []
    for name, row in grid.rows.items():
        top = row.mapTo(grid.viewport(), QPoint(0, 0)).y()
        if top >= 0 and top + row.height() <= grid.viewport().height():
            out.append(name)
    return out


@pytest.fixture
def window(qtbot, make_window, settings, examples_dir):
    win = make_window(
        [str(examples_dir / "tutorial_torch.py"), str(examples_dir / "tutorial_tf.py")]
    )
    win.resize(1500, 950)
    results = run_keys(qtbot, win, keys_of(win, "mul_weights"))
    assert [r.status for r in results] == ["ok", "ok"]
    win.tree.select_pair("mul_weights")
    win.show_pair("mul_weights")
    QApplication.processEvents()
    return win


def test_rows_are_compact_and_keep_their_height_when_numeric_arrives(qtbot, window):
    grid = window.grid
    assert list(grid.rows) == ["x", "weights", "out"]
    heights = {name: row.height() for name, row in grid.rows.items()}
    assert len(set(heights.values())) == 1
    assert len(_visible_rows(grid)) >= 3, (grid.viewport().height(), heights)
    window.settings_panel.modes["numeric"].setChecked(True)
    run_keys(qtbot, window, keys_of(window, "mul_weights"))
    window.show_pair("mul_weights")
    QApplication.processEvents()
    assert len(grid.rows["x"].cells) == 6  # the numeric column is there
    assert {name: row.height() for name, row in grid.rows.items()} == heights
    assert len(_visible_rows(grid)) >= 3
    for _ in range(5):  # the axes painted, widths final
        QApplication.processEvents()
    assert grid.horizontalScrollBar().maximum() == 0  # six columns fit at 1500x950


def test_wheel_scrolls_ctrl_wheel_zooms_combo_needs_focus_and_fit(qtbot, window):
    window.resize(1500, 700)  # less room: the grid scrolls
    QApplication.processEvents()
    grid = window.grid
    bar = grid.verticalScrollBar()
    assert bar.maximum() > 0
    row = grid.rows["x"]
    cell = next(c for c in row.cells if c.has_data)
    shown = cell.plot.vb.viewRange()
    bar.setValue(0)
    _wheel(row.canvas.viewport(), _centre(row, cell))
    assert bar.value() > 0  # the grid scrolled...
    assert cell.plot.vb.viewRange() == shown  # ...and the plot did not zoom
    bar.setValue(0)
    _wheel(row.canvas.viewport(), _centre(row, cell), ctrl=True)
    assert bar.value() == 0
    zoomed = cell.plot.vb.viewRange()
    assert zoomed != shown
    # the row's other plots follow the zoom (linked), and "fit" brings the row back
    other = next(c for c in row.cells if c.has_data and c is not cell)
    assert other.plot.vb.viewRange()[0] == pytest.approx(zoomed[0])
    qtbot.mouseClick(row.fit_button, Qt.LeftButton)
    assert cell.plot.vb.viewRange()[0] == pytest.approx(shown[0])
    assert cell.plot.vb.viewRange()[1] == pytest.approx(shown[1])

    combo = row.view_box
    before = combo.currentIndex()
    bar.setValue(0)
    _wheel(combo, QPoint(5, 5))
    assert combo.currentIndex() == before and bar.value() > 0  # not focused: the grid scrolls
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus)
    _wheel(combo, QPoint(5, 5))
    assert combo.currentIndex() != before  # focused: the wheel picks a view


def test_every_column_reachable_at_1000x700(qtbot, window):
    window.settings_panel.modes["numeric"].setChecked(True)
    run_keys(qtbot, window, keys_of(window, "mul_weights"))
    window.show_pair("mul_weights")
    window.resize(1000, 700)
    QApplication.processEvents()
    grid = window.grid
    row = grid.rows["x"]
    assert len(row.cells) == 6
    hbar = grid.horizontalScrollBar()
    # every plot is at least readable-wide; what does not fit is behind a horizontal scroll bar
    widths = [c.plot.vb.sceneBoundingRect().width() for c in row.cells]
    assert min(widths) >= 60, widths
    last = row.cells[-1]
    right = row.canvas.mapTo(
        grid.widget(), row.canvas.mapFromScene(last.plot.sceneBoundingRect().topRight())
    ).x()
    assert right <= grid.widget().width()  # not cut off inside the grid body
    if right > grid.viewport().width():
        assert hbar.maximum() > 0
        hbar.setValue(hbar.maximum())
        QApplication.processEvents()
        assert (
            row.canvas.mapTo(
                grid.viewport(), row.canvas.mapFromScene(last.plot.sceneBoundingRect().topRight())
            ).x()
            <= grid.viewport().width() + 1
        )


def test_no_row_cuts_its_last_column_at_1000x700(qtbot, make_window, settings, examples_dir):
    """round_ste's rows need different widths (x has a narrow 'no gradient' cell, out six plots
    with wider tick labels): the widest decides the scroll range, and no row's plots overflow
    its canvas (out's TF numeric plot was cut off with the scroll bar at its end)."""
    win = shown_round_ste(
        qtbot,
        make_window,
        settings,
        [examples_dir / "tutorial_torch.py", examples_dir / "tutorial_tf.py"],
    )
    win.resize(1000, 700)
    grid = win.grid
    seen = []

    def steady() -> bool:  # axes take their width once painted: wait for it
        QApplication.processEvents()
        seen.append(tuple((r.minimumWidth(), r.canvas.width()) for r in grid.rows.values()))
        return len(seen) > 3 and seen[-1] == seen[-2] == seen[-3]

    qtbot.waitUntil(steady)
    hbar = grid.horizontalScrollBar()
    assert hbar.maximum() > 0
    hbar.setValue(hbar.maximum())
    QApplication.processEvents()
    for name, row in grid.rows.items():
        assert len(row.cells) == 6
        for cell in row.cells:
            rect = cell.plot.sceneBoundingRect()
            assert rect.right() <= row.canvas.width() + 1, (name, cell.framework, cell.mode)
        last = row.canvas.mapTo(
            grid.viewport(),
            row.canvas.mapFromScene(row.cells[-1].plot.sceneBoundingRect().topRight()),
        )
        assert last.x() <= grid.viewport().width() + 1, name
    # the narrow 'no gradient' cell of TF's default: its start stays in sight, the rest elided,
    # the whole note in the tooltip (centred and clipped, its first line was lost)
    cell = next(c for c in grid.rows["x"].cells if (c.framework, c.mode) == ("tf", "default"))
    assert not cell.has_data and cell.message.startswith("no gradient")
    label = cell.slot.message_item
    shown = label.textItem.toPlainText()
    assert label.textItem.document().size().height() <= cell.plot.vb.height()
    assert shown == cell.message or (
        shown.endswith("… (hover for all)")
        and cell.message.startswith(shown[: -len(" … (hover for all)")])
    )
    assert shown.startswith("no gradient") and cell.plot.toolTip() == cell.message
