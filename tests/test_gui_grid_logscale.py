"""View ▸ Log scale (issue 13 item 11.2), real window offscreen, real workers: values and
difference views of every row on a log10 |g| axis, zeros left out and counted, no NaN/inf on a
curve, an all-zero gradient says so; the choice persists as a plain bool and toggles back."""

import numpy as np
import pytest
from gui_helpers import shown_round_ste  # noqa: E402

pytest.importorskip("pytestqt")


pytestmark = pytest.mark.gui


@pytest.fixture
def ste(qtbot, make_window, settings, examples_dir):
    return shown_round_ste(qtbot, make_window, settings, [examples_dir / "tutorial_torch.py"])


def _cells(grid, tensor):
    return {(c.framework, c.mode): c for c in grid.rows[tensor].cells}


def _ylabel(cell):
    return cell.plot.getAxis("left").labelText


def _curve(cell):
    items = [i for i in cell.plot.listDataItems() if i.xData is not None and len(i.xData) > 2]
    assert len(items) == 1
    return items[0]


def test_log_scale_toggles_value_views_and_persists(qtbot, ste, settings):
    grid = ste.grid
    grid.set_view("x", "values")
    assert not ste.act_log_scale.isChecked()
    ste.act_log_scale.trigger()
    assert settings.value("view/log_scale", type=bool) is True
    cells = _cells(grid, "x")
    custom = cells[("torch", "custom")]
    assert _ylabel(custom) == "log10 |∂loss/∂x|"  # log10 |g| on a plain axis, as exported
    x, y = _curve(custom).getData()  # as drawn: log10 |g|
    assert np.isfinite(y).all() and np.isfinite(x).all()
    np.testing.assert_array_equal(y, np.zeros(200))  # straight-through: |1| everywhere
    default = cells[("torch", "default")]  # round's gradient: all zero
    assert not default.has_data and "all zero" in default.message
    t = grid.results["torch"].tensor("x")
    numeric = cells[("torch", "numeric")]
    zeros = int(np.count_nonzero(t.grads["numeric"] == 0))
    if numeric.has_data:
        _x, ny = _curve(numeric).getData()
        assert np.isfinite(ny).all() and len(ny) == 200 - zeros
    grid.set_view("x", "histogram")  # not a value view: stays linear
    assert _ylabel(_cells(grid, "x")[("torch", "custom")]) == "count"
    grid.set_view("x", "values")
    ste.act_log_scale.trigger()
    assert settings.value("view/log_scale", type=bool) is False
    custom = _cells(grid, "x")[("torch", "custom")]
    assert _ylabel(custom) == "∂loss/∂x"
    np.testing.assert_array_equal(_curve(custom).getData()[1], np.ones(200))


def test_saved_log_scale_is_on_at_launch(make_window, settings, examples_dir):
    settings.setValue("view/log_scale", True)
    win = make_window([str(examples_dir / "tutorial_torch.py")])
    assert win.act_log_scale.isChecked() and win.grid.log_scale
