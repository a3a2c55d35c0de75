"""An export draws what the window shows, log scale included (issue 13 item 11.2): a real op run
in the real window (offscreen, the session's workers), View ▸ Log scale on, the row exported to
SVG from the window and read back: the dots sit at log10 |g| on the file's own axes, the axis
label says log10, the zero left out is counted; a linear export says nothing about log."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import FakeDialogs, keys_of, run_keys  # noqa: E402
from samples import DECADES, DECADES_SRC, SVG_NS

from gradviz.plots.palette import MODE_COLORS
from gradviz.qt import export_actions as EA
from gradviz.qt.export.layout import layout

pytestmark = pytest.mark.gui


@pytest.fixture
def shown(qtbot, make_window, tmp_path):
    path = tmp_path / "decades.py"
    path.write_text(DECADES_SRC)
    win = make_window([str(path)])  # modes default, custom (test_gui's settings)
    [res] = run_keys(qtbot, win, keys_of(win, "decades"))
    assert res.status == "ok", res.error
    np.testing.assert_allclose(res.tensor("x").grads["custom"], DECADES, rtol=1e-6)
    np.testing.assert_array_equal(res.tensor("x").grads["default"], np.ones(6))
    win.tree.select_pair("decades")
    win.show_pair("decades")
    return win


def _export(win, path):
    dlg = FakeDialogs()
    assert EA.grid_image(win.exports, path=str(path), tensor="x", dialogs=dlg) == str(path)
    assert not dlg.errors
    root = ET.parse(path).getroot()
    texts = [" ".join((t.text or "").split()) for t in root.iter(SVG_NS + "text")]
    dots = {}  # stroke colour -> [(cx, cy)] of its circles
    for g in root.iter(SVG_NS + "g"):
        circles = g.findall(SVG_NS + "circle")
        if circles:  # in layout units, no transform
            assert g.get("transform") in (None, "matrix(1,0,0,1,0,0)")
        for c in circles:
            dots.setdefault((g.get("stroke") or "").lower(), []).append(
                (float(c.get("cx")), float(c.get("cy")))
            )
    return texts, dots


def _values(win, mode, points):
    """The (x, y) data values of dots drawn in `mode`'s panel, read back from their position in
    the file through the panel's plot area and axis ranges."""
    fig = win.grid.figure("x")
    [j] = [j for j, p in enumerate(fig.panels[0]) if p.mode == mode]
    panel, plot = fig.panels[0][j], layout(fig).plot[0][j]
    (x0, x1), (y0, y1) = panel.x_range, panel.y_range
    pts = sorted(points)
    xs = [x0 + (px - plot.x) / plot.w * (x1 - x0) for px, _ in pts]
    ys = [y0 + (plot.bottom - py) / plot.h * (y1 - y0) for _, py in pts]
    return np.array(xs), np.array(ys)


def test_log_scale_export_draws_log10_of_the_gradient(shown, tmp_path):
    shown.act_log_scale.trigger()  # View ▸ Log scale, as the user turns it on
    custom = next(c for c in shown.grid.rows["x"].cells if c.mode == "custom")
    assert custom.plot.getAxis("left").labelText == "log10 |∂loss/∂x|"
    texts, dots = _export(shown, tmp_path / "log.svg")
    assert texts.count("log10 |∂loss/∂x|") == 2  # the y label of both panels, as in the window
    assert "6 elements · log10 |g|; 1 zero point not drawn" in texts
    x, y = _values(shown, "custom", dots[MODE_COLORS["custom"]])
    # five dots (the zero at index 0 has no log), at log10 |g| = -2 .. 2
    np.testing.assert_allclose(x, [1, 2, 3, 4, 5], atol=0.05)
    np.testing.assert_allclose(y, [-2, -1, 0, 1, 2], atol=0.05)
    x, y = _values(shown, "default", dots[MODE_COLORS["default"]])
    np.testing.assert_allclose(x, range(6), atol=0.05)
    np.testing.assert_allclose(y, np.zeros(6), atol=0.05)  # log10(1) = 0
    # the window drew the same numbers
    np.testing.assert_allclose(custom.data["y"], [-2, -1, 0, 1, 2], atol=1e-6)


def test_linear_export_says_nothing_about_log(shown, tmp_path):
    assert not shown.act_log_scale.isChecked()
    texts, dots = _export(shown, tmp_path / "linear.svg")
    assert not [t for t in texts if "log" in t.lower()]
    assert texts.count("∂loss/∂x") == 2
    x, y = _values(shown, "custom", dots[MODE_COLORS["custom"]])
    np.testing.assert_allclose(x, range(6), atol=0.05)
    np.testing.assert_allclose(y, DECADES, atol=0.5)  # linear: 0 .. 100 on a 0 .. 100 axis
    assert y[-1] == pytest.approx(100, abs=0.5) and y[:3] == pytest.approx([0, 0, 0], abs=0.5)
