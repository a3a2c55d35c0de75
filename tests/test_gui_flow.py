"""The window's flow view of a `stack` run (real window offscreen, real workers): the depth field,
one chart per framework from the Qt-free description, the grid still below, and the exported
flow chart drawn from the very description the window shows."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import FakeDialogs, keys_of, run_keys  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gradviz.plots.figure import MODE_COLORS  # noqa: E402
from gradviz.plots.flow import build_flow_figure  # noqa: E402
from gradviz.qt import export_actions as EA  # noqa: E402
from gradviz.qt.export import render_flow_image  # noqa: E402
from gradviz.vocab import Framework  # noqa: E402

pytestmark = pytest.mark.gui
SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def stack_window(make_window, corpus_dir):
    win = make_window(
        [str(corpus_dir / "flow" / "flow_torch.py"), str(corpus_dir / "flow" / "flow_tf.py")]
    )
    panel = win.settings_panel
    panel.graph.setCurrentIndex(panel.graph.findData("op"))
    assert not panel.depth.isEnabled()
    panel.graph.setCurrentIndex(panel.graph.findData("stack"))
    assert panel.depth.isEnabled()
    panel.depth.setValue(3)
    panel.shape.setText("16")
    panel.modes["numeric"].setChecked(True)
    assert panel.settings("torch").depth == 3 and panel.settings("tf").graph == "stack"
    return win


def _same_pixels(a: QImage, b: QImage) -> bool:
    a = a.convertToFormat(QImage.Format.Format_RGB32)
    b = b.convertToFormat(QImage.Format.Format_RGB32)
    return a.size() == b.size() and a == b


def test_flow_view_shows_each_framework_and_marks_the_dead_default(qtbot, stack_window, tmp_path):
    win = stack_window
    results = run_keys(qtbot, win, keys_of(win, "sign_ste"))
    assert [r.status for r in results] == ["ok", "ok"]
    win.tree.select_pair("sign_ste")
    win.show_pair("sign_ste")
    view = win.flow_view
    assert view.isVisible()
    fig = view.figure
    assert fig == build_flow_figure(
        [a.result for a in win.state.pair_analyses("sign_ste").values()], "sign_ste"
    )
    assert [c.title for c in fig.charts] == ["PyTorch · sign_ste", "TensorFlow · sign_ste"]
    for chart in fig.charts:
        assert chart.depth == 3
        series = {s.mode: s for s in chart.series}
        assert {m: s.color for m, s in series.items()} == {m: MODE_COLORS[m] for m in series}
        assert series["default"].layers == () and series["default"].dies_at == 3
        assert series["custom"].layers == (1, 2, 3) and series["custom"].dies_at is None
    # the per-tensor grid stays below it, with the room: the chart takes what it needs to read
    assert {"h1", "o1", "w3", "h3", "o3"} <= set(win.grid.rows)
    win.resize(1500, 950)
    QApplication.processEvents()
    assert view.height() <= 210 < win.grid.height()
    assert win.grid.viewport().height() >= 2 * next(iter(win.grid.rows.values())).height()

    # the window's pixels are the exporter's pixels for the same description at the same size
    shown = view.grab().toImage()
    drawn = render_flow_image(fig, view.width(), view.height(), scale=shown.devicePixelRatio())
    assert _same_pixels(shown, drawn)

    dlg = FakeDialogs()
    svg = EA.flow_image(win.exports, path=str(tmp_path / "flow.svg"), dialogs=dlg)
    assert svg and not dlg.errors
    root = ET.parse(svg).getroot()
    texts = " ".join(t.text or "" for t in root.iter(SVG_NS + "text"))
    for chart in fig.charts:
        assert chart.title in texts
    assert fig.title in texts and "gradient dies" in texts
    strokes = {g.get("stroke") for g in root.iter(SVG_NS + "g")}
    assert {MODE_COLORS["default"], MODE_COLORS["custom"], MODE_COLORS["numeric"]} <= strokes
    for ext in (".png", ".pdf"):
        path = EA.flow_image(win.exports, path=str(tmp_path / f"flow{ext}"), dialogs=dlg)
        assert path and (tmp_path / f"flow{ext}").stat().st_size > 1000
    assert not QImage(str(tmp_path / "flow.png")).isNull()


def test_flow_view_hides_for_other_graphs(qtbot, stack_window):
    win = stack_window
    run_keys(qtbot, win, keys_of(win, "reverse_grad"))
    win.tree.select_pair("reverse_grad")
    win.show_pair("reverse_grad")
    assert win.flow_view.isVisible()
    win.settings_panel.graph.setCurrentIndex(win.settings_panel.graph.findData("op"))
    run_keys(qtbot, win, keys_of(win, "reverse_grad"))
    win.show_pair("reverse_grad")
    assert win.flow_view.figure is None and not win.flow_view.isVisible()
    dlg = FakeDialogs()
    assert EA.flow_image(win.exports, path="/nonexistent/never.png", dialogs=dlg) is None
    assert dlg.errors and "stack graph" in dlg.errors[0][1]


@pytest.mark.skipif(not Framework.JAX.installed, reason="jax is not installed")
def test_flow_view_shows_a_jax_chart_beside_torch_and_tf(qtbot, make_window, corpus_dir):
    """The twins of flow_torch.py in all three frameworks: one chart each, JAX's last, its
    reversal's custom norms lambda^(N-i+1) times its default ones, as the other two's are."""
    flow = corpus_dir / "flow"
    win = make_window([str(flow / f"flow_{fw}.py") for fw in ("torch", "tf", "jax")])
    panel = win.settings_panel
    panel.graph.setCurrentIndex(panel.graph.findData("stack"))
    panel.depth.setValue(3)
    panel.shape.setText("16")
    results = run_keys(qtbot, win, keys_of(win, "reverse_grad"))
    assert sorted(r.framework for r in results) == ["jax", "tf", "torch"]
    assert all(r.status == "ok" for r in results), [r.error for r in results]
    win.tree.select_pair("reverse_grad")
    win.show_pair("reverse_grad")
    assert win.flow_view.isVisible()
    fig = win.flow_view.figure
    assert fig == build_flow_figure(
        [a.result for a in win.state.pair_analyses("reverse_grad").values()], "reverse_grad"
    )
    assert [c.title for c in fig.charts] == [
        "PyTorch · reverse_grad",
        "TensorFlow · reverse_grad",
        "JAX · reverse_grad",
    ]
    [jax] = [
        a.result
        for a in win.state.pair_analyses("reverse_grad").values()
        if a.result.framework == "jax"
    ]
    jax_chart = fig.charts[2]
    series = {s.mode: s for s in jax_chart.series}
    assert series["default"].layers == series["custom"].layers == (1, 2, 3)
    assert series["custom"].dies_at is None and series["default"].dies_at is None
    for layer, d, c in zip(
        series["default"].layers, series["default"].norms, series["custom"].norms
    ):
        assert c == pytest.approx(0.5 ** (3 - layer + 1) * d, rel=1e-6)
        h = jax.tensor(f"h{layer}").grads["default"].astype(np.float64)
        assert d == pytest.approx(float(np.sqrt(np.sum(h * h))), rel=1e-6)
