"""Issue 28 item 6 on the real window (offscreen, real workers), a stack run: the flow chart
reads out the norms of the layer under the mouse as numbers, in the legend's line above its charts, and
at 1000x700 the grid below it still shows two whole rows (both rows' plots in its viewport)."""

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import keys_of, run_keys  # noqa: E402
from PySide6.QtCore import QPoint, QRect  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gradviz.plots.ticks import fmt  # noqa: E402
from gradviz.qt.export.flow import flow_layout  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture
def stack_run(qtbot, make_window, corpus_dir):
    win = make_window([str(corpus_dir / "flow" / "flow_torch.py")])
    panel = win.settings_panel
    panel.graph.setCurrentIndex(panel.graph.findData("stack"))
    panel.depth.setValue(3)
    panel.shape.setText("16")
    run_keys(qtbot, win, keys_of(win, "sign_ste"))
    win.tree.select_pair("sign_ste")
    win.show_pair("sign_ste")
    return win


def test_the_flow_chart_reads_out_the_hovered_layers_norms(qtbot, stack_run):
    view = stack_run.flow_view
    qtbot.waitUntil(view.isVisible)
    chart = view.figure.charts[0]
    plot = flow_layout(view.figure, view.width(), view.height()).plots[0]
    # layer 2 of 3 sits in the middle of the plot's x range (0.5, 3.5)
    at = QPoint(int(plot.x + plot.w / 2), int(plot.y + plot.h / 2))
    qtbot.mouseMove(view, at)
    qtbot.waitUntil(view.readout.isVisible)
    custom = next(s for s in chart.series if s.mode == "custom")
    text = view.readout.text()
    assert text.startswith(f"{chart.title}, layer 2 (h2): ")
    assert f"custom {fmt(custom.norms[custom.layers.index(2)])}" in text
    # the default dies at layer 3, seen from the loss: nothing reaches layer 2 either
    default = next(s for s in chart.series if s.mode == "default")
    assert default.dies_at == 3 and default.layers == ()
    assert "default none (dies at layer 3)" in text
    # the readout sits in the legend's line, above every chart: it covers no data
    box = view.readout.geometry()
    for c in flow_layout(view.figure, view.width(), view.height()).charts:
        assert box.bottom() < c.y
    qtbot.mouseMove(view, QPoint(2, 2))  # off the plots: no readout
    qtbot.waitUntil(lambda: not view.readout.isVisible())


def test_at_1000x700_the_grid_shows_two_whole_stack_rows(qtbot, stack_run):
    win = stack_run
    win.resize(1000, 700)
    qtbot.waitUntil(lambda: win.width() == 1000 and win.height() == 700)
    QApplication.processEvents()
    assert win.flow_view.isVisible()
    grid = win.grid
    port = QRect(QPoint(0, 0), grid.viewport().size())
    rows = list(grid.rows.values())[:2]
    for row in rows:
        for cell in row.cells:
            if not cell.has_data:
                continue
            area = cell.slot.item.vb.sceneBoundingRect().toRect()  # the plot's data area
            top_left = row.canvas.mapTo(grid.viewport(), row.canvas.mapFromScene(area.topLeft()))
            bottom = row.canvas.mapTo(grid.viewport(), row.canvas.mapFromScene(area.bottomRight()))
            assert port.contains(top_left) and port.contains(bottom), (
                row.name,
                port,
                top_left,
                bottom,
            )
