"""Seeded interaction fuzz of the real window over real results (issue 11, item 15): wheel over
plots, row headers and view combos, the auto-range button, view switches of one row and of all,
pair switches, re-runs and cancels, each followed by a real paint. The window segfaulted in
GraphicsView.paintEvent on such a sequence; here it must stay up and keep drawing true values."""

import random

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

pytestmark = pytest.mark.gui
SEED = 11
STEPS = 200
VIEWS = ("values", "histogram", "scatter", "vs_input", "heatmap")


def _wheel(widget, pos: QPoint, up: bool) -> None:
    ev = QWheelEvent(
        QPointF(pos),
        QPointF(widget.mapToGlobal(pos)),
        QPoint(0, 0),
        QPoint(0, 120 if up else -120),
        Qt.NoButton,
        Qt.NoModifier,
        Qt.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, ev)


def _plot_center(row, plot) -> QPoint:
    return row.canvas.mapFromScene(plot.vb.sceneBoundingRect().center())


def _paint(win) -> None:
    QApplication.processEvents()
    win.grid.widget().repaint()  # paint now, not when the loop gets to it


def _step(win, rng: random.Random, log: list) -> None:
    grid = win.grid
    rows = list(grid.rows.values())
    action = rng.choice((0, 1, 2, 3, 4, 5, 5, 5, 6, 7, 8, 9))
    row = rng.choice(rows) if rows else None
    log.append((action, row.name if row else None))
    if row is None or action == 0:
        pairs = list(win.state.loaded.pairs())
        win.tree.select_pair(rng.choice(pairs))
    elif action in (1, 2) and row.plots:
        plot = rng.choice(row.plots).item
        _wheel(row.canvas.viewport(), _plot_center(row, plot), rng.random() < 0.5)
    elif action == 3 and row.plots:
        rng.choice(row.plots).item.autoBtnClicked()
    elif action == 4:
        _wheel(row, QPoint(20, 20), rng.random() < 0.5)  # the row header
    elif action == 5:
        win.set_all_views(rng.choice(VIEWS))
    elif action == 6:
        _wheel(row.view_box, QPoint(5, 5), rng.random() < 0.5)  # switches the row's view
    elif action == 7:
        offered = [row.view_box.itemData(i) for i in range(row.view_box.count())]
        grid.set_view(row.name, rng.choice(offered))
    elif action == 8:
        win.run_current()  # while one runs: queued, the latest ask wins
    else:
        win.cancel() if win.bridge.running and rng.random() < 0.5 else win.run_current()
    _paint(win)


def test_random_interaction_never_crashes_and_values_stay_true(qtbot, make_window, examples_dir):
    files = [str(examples_dir / "tutorial_torch.py"), str(examples_dir / "tutorial_tf.py")]
    win = make_window(files, {"run/modes": "default,custom,numeric"})  # 6 columns; scatter shows 2
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run()
    rng = random.Random(SEED)
    log: list = []
    for _ in range(STEPS):
        _step(win, rng, log)
    while win.bridge.running or win.state.pending is not None:
        with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
            pass
    assert len(log) == STEPS and {a for a, _ in log} == set(range(10))

    # still a working window: a fresh run of one pair draws its true gradients
    keys = [k for k in win.state.loaded.ops if win.state.loaded.pair_name(k) == "mul_weights"]
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run(keys)
    win.tree.select_pair("mul_weights")
    win.show_pair("mul_weights")
    win.grid.set_view("x", "values")
    _paint(win)
    torch_result = next(r for r in done.args[0] if r.framework == "torch")
    weights = torch_result.tensor("weights").value.ravel()
    cell = next(c for c in win.grid.rows["x"].cells if (c.framework, c.mode) == ("torch", "custom"))
    np.testing.assert_allclose(cell.data["y"], weights, rtol=1e-6)  # d loss / d x = weights
    assert len(win.grid.rows["x"].plots) == 6
    assert len(win.grid.rows["x"].canvas.ci.items) == 6


def test_switching_views_of_real_results_frees_no_plot_under_the_painter(
    qtbot, engine, examples_dir
):
    """The crash reduced: real results of one pair, every row switched between views with 6, 2
    and 6 columns, painted after each switch. Plots a narrower view leaves out are kept for reuse;
    freeing them made Qt crash in the next paint (within ~40 switches with seed 0)."""
    from gradviz.app.analysis import analyze
    from gradviz.catalog import pair_ops, requests_for, select
    from gradviz.model import FRAMEWORKS, MODES, RunSettings
    from gradviz.qt.grid import GridView

    catalogs = engine.load(
        [str(examples_dir / "tutorial_torch.py"), str(examples_dir / "tutorial_tf.py")]
    )
    chosen, _ = select(pair_ops(catalogs), ["mul_weights"])
    results = engine.run(requests_for(chosen, FRAMEWORKS, RunSettings(modes=MODES)))
    prepared = {r.framework: analyze(r) for r in results}
    grid = GridView()
    grid.resize(1000, 700)
    qtbot.addWidget(grid)
    grid.show()
    grid.set_data(
        "mul_weights",
        {fw: p.result for fw, p in prepared.items()},
        MODES,
        {fw: p.comparison for fw, p in prepared.items()},
        series={fw: p.series for fw, p in prepared.items()},
    )
    rng = random.Random(0)
    for _ in range(60):
        view = rng.choice(("values", "histogram", "scatter", "vs_input"))
        for name in list(grid.rows):
            grid.set_view(name, view)
        QApplication.processEvents()
        QApplication.processEvents()
    row = grid.rows["x"]
    assert len(row.plots) + len(row.spare) == 6  # reused, never piled up
    grid.set_view("x", "values")
    assert len(row.plots) == 6 and not row.spare
    custom = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "custom"))
    weights = prepared["torch"].result.tensor("weights").value.ravel()
    np.testing.assert_allclose(custom.data["y"], weights, rtol=1e-6)
