"""The grid redraws in place: plots of the same tensors are reused, the same results are not drawn
twice, curves prepared off the GUI thread are used as they are, and nothing piles up on reuse."""

from dataclasses import replace

import numpy as np
import pytest
from samples import ste_result

from gradviz.app.analysis import analyze, values_series
from gradviz.model import MODES

pytest.importorskip("PySide6")


@pytest.fixture
def grid(qtbot):
    from gradviz.qt.grid import GridView

    g = GridView()
    g.resize(1000, 700)
    qtbot.addWidget(g)
    return g


def _cell(grid, tensor, fw, mode):
    return next(c for c in grid.rows[tensor].cells if (c.framework, c.mode) == (fw, mode))


def test_rerun_reuses_rows_and_plots_and_shows_new_values(grid):
    first = {"torch": ste_result("torch", seed=0), "tf": ste_result("tf", seed=0)}
    assert grid.set_data("round_ste", first, MODES)
    rows = dict(grid.rows)
    plots = {name: list(row.plots) for name, row in grid.rows.items()}
    assert len(plots["x"]) == 6
    second = {"torch": ste_result("torch", seed=1), "tf": ste_result("tf", seed=1)}
    assert grid.set_data("round_ste", second, MODES)
    assert all(grid.rows[n] is rows[n] for n in rows)
    assert all(a is b for n in plots for a, b in zip(plots[n], grid.rows[n].plots))
    custom = _cell(grid, "x", "torch", "custom")
    np.testing.assert_allclose(custom.data["y"], second["torch"].tensor("x").grads["custom"])
    # one curve per cell after the redraw, not the old one plus the new one
    curves = [i for i in custom.plot.listDataItems() if i.xData is not None and len(i.xData) == 200]
    assert len(curves) == 1
    # a third run with a spike: the row's shared y range grows to show it in every linked cell
    third = {
        "torch": ste_result("torch", seed=2, spike_at=9, spike=80.0),
        "tf": ste_result("tf", seed=2),
    }
    grid.set_data("round_ste", third, MODES)
    linked = [c for c in grid.rows["x"].cells if c.has_data and "projections" not in c.data]
    assert len(linked) == 6
    for cell in linked:
        lo, hi = cell.plot.vb.viewRange()[1]
        assert lo <= 0.0 and hi >= 80.0, (cell.framework, cell.mode, lo, hi)


def test_same_results_are_not_drawn_again(grid):
    results = {"torch": ste_result("torch")}
    assert grid.set_data("round_ste", results, MODES) is True
    before = _cell(grid, "x", "torch", "custom")
    assert grid.set_data("round_ste", dict(results), MODES) is False
    assert _cell(grid, "x", "torch", "custom") is before
    # a new result object of the same op is drawn
    assert grid.set_data("round_ste", {"torch": ste_result("torch")}, MODES) is True


def test_fewer_columns_remove_plots_and_new_tensors_get_rows(grid):
    grid.set_data("round_ste", {"torch": ste_result("torch"), "tf": ste_result("tf")}, MODES)
    grid.set_data("round_ste", {"torch": ste_result("torch")}, ("default", "custom"))
    row = grid.rows["x"]
    assert [(c.framework, c.mode) for c in row.cells] == [("torch", "default"), ("torch", "custom")]
    assert len(row.plots) == 2
    assert len([i for i in row.canvas.ci.items]) == 2
    other = ste_result("torch", op="other")
    t_x, t_out = other.tensors
    other = replace(other, tensors=(replace(t_x, name="y"), t_out))
    grid.set_data("other", {"torch": other}, ("default", "custom"))
    assert list(grid.rows) == ["y", "out"]


def test_reused_plot_loses_old_notes_menu_entries_and_message_state(grid):
    added = []

    def hook(menu, tensor, fw, mode):
        added.append(menu.addAction(f"export {tensor} {fw} {mode}"))

    grid.plot_menu_hook = hook
    big = {"torch": ste_result("torch", n=5000, nan_at=(3,))}
    grid.set_data("round_ste", big, MODES)
    custom = _cell(grid, "x", "torch", "custom")
    assert set(custom.slot.notes) == {"note", "warn"}  # the panel's info note and NaN warning
    n_actions = len(custom.plot.vb.menu.actions())
    for seed in (1, 2):
        grid.set_data(
            "round_ste", {"torch": ste_result("torch", n=5000, nan_at=(3,), seed=seed)}, MODES
        )
        custom = _cell(grid, "x", "torch", "custom")
        assert set(custom.slot.notes) == {"note", "warn"}
        assert len(custom.plot.vb.menu.actions()) == n_actions
    small = {"torch": ste_result("torch", n=50)}
    grid.set_data("round_ste", small, MODES)
    custom = _cell(grid, "x", "torch", "custom")
    assert custom.slot.notes == {"note": "50 elements"}  # the warning went with the NaN
    # a cell that showed a message becomes a normal plot again when it has data
    broken = {"torch": replace(ste_result("torch"), mode_errors={})}
    t_x, t_out = broken["torch"].tensors
    broken["torch"] = replace(
        broken["torch"],
        tensors=(
            replace(t_x, grads={"default": t_x.grads["default"]}, absent={"custom": "no gradient"}),
            t_out,
        ),
    )
    grid.set_data("round_ste", broken, MODES)
    assert not _cell(grid, "x", "torch", "custom").has_data
    assert not _cell(grid, "x", "torch", "custom").plot.getAxis("left").isVisible()
    grid.set_data("round_ste", {"torch": ste_result("torch")}, MODES)
    cell = _cell(grid, "x", "torch", "custom")
    assert cell.has_data and cell.plot.getAxis("left").isVisible()


def test_prepared_curves_are_drawn_as_given(grid):
    res = ste_result("torch", n=100_000, spike_at=777)
    ready = analyze(res)
    assert ready.comparison is not None and ready.problem == ""
    marker = ready.series[("x", "custom")]
    grid.set_data(
        "round_ste",
        {"torch": res},
        MODES,
        {"torch": ready.comparison},
        series={"torch": ready.series},
    )
    cell = _cell(grid, "x", "torch", "custom")
    assert cell.data["y"] is marker.y  # not decimated again on the GUI thread
    assert cell.data["y"].max() == pytest.approx(50.0)  # the spike survives decimation
    assert set(values_series(res)) == {(t, m) for t in ("x", "out") for m in MODES}


def test_partial_result_shows_numeric_computing_then_fills_it(grid):
    full = ste_result("torch")
    partial = replace(
        full,
        partial=True,
        tensors=tuple(
            replace(t, grads={m: g for m, g in t.grads.items() if m != "numeric"})
            for t in full.tensors
        ),
    )
    grid.set_data("round_ste", {"torch": partial}, MODES)
    numeric = _cell(grid, "x", "torch", "numeric")
    assert not numeric.has_data and numeric.message == "numeric: computing…"
    assert _cell(grid, "x", "torch", "custom").has_data
    grid.set_data("round_ste", {"torch": full}, MODES)
    numeric = _cell(grid, "x", "torch", "numeric")
    assert numeric.has_data and numeric.message == ""
    np.testing.assert_array_equal(numeric.data["y"], np.zeros(200))


def test_a_run_that_failed_before_its_op_was_found_shares_the_rows(grid):
    """torch failed while loading (no OpInfo), tf ran: one set of rows, torch's cells say why."""
    from gradviz.model import ErrorInfo

    tf = ste_result("tf")
    failed = replace(
        ste_result("torch"),
        op=None,
        status="error",
        tensors=(),
        error=ErrorInfo("ImportError", "no module named foo", "/work/ops/a.py:3"),
    )
    grid.set_data("round_ste", {"torch": failed, "tf": tf}, MODES)
    assert list(grid.rows) == ["x", "out"]
    cells = {(c.framework, c.mode): c for c in grid.rows["x"].cells}
    assert cells[("tf", "custom")].has_data
    assert cells[("torch", "custom")].message.startswith("run failed: ImportError")


def test_numeric_arriving_gets_the_rows_range(grid):
    """The numeric cells, notes while numeric computed, join the row's links with its range even
    when the row's range does not change (a constant row: no range signal to follow)."""
    full = {fw: ste_result(fw) for fw in ("torch", "tf")}
    partial = {
        fw: replace(
            r,
            partial=True,
            tensors=tuple(
                replace(t, grads={m: g for m, g in t.grads.items() if m != "numeric"})
                for t in r.tensors
            ),
        )
        for fw, r in full.items()
    }
    grid.set_data("round_ste", partial, MODES)
    grid.set_data("round_ste", full, MODES)
    ranges = {
        (c.framework, c.mode): tuple(c.plot.vb.viewRange()[1]) for c in grid.rows["out"].cells
    }
    assert len(ranges) == 6, ranges
    for key, r in ranges.items():
        assert r == pytest.approx((0.9, 1.1)), (key, r)
