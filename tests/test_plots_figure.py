"""Grid figure descriptions built from hand-made RunResults (no Qt)."""

import numpy as np
import pytest
from samples import broken_tf_result, ste_result

from gradviz.plots import figure as F


@pytest.fixture
def results():
    return [ste_result("torch", n=300, spike_at=50, nan_at=(120,)), broken_tf_result(300)]


def test_grid_rows_columns_and_notes(results):
    fig = F.build_figure(results, "values", {("torch", "round_ste", "x"): "surrogate"})
    assert [c.label for c in fig.columns] == [
        "torch · default",
        "torch · custom",
        "torch · numeric",
        "tf · default",
        "tf · custom",
    ]
    assert [r.tensor for r in fig.rows] == ["x", "out"]
    assert fig.rows[0].label == "x · input · (300,) float32"
    assert fig.rows[0].verdicts == {"torch": "surrogate"}
    x = fig.panels[0]
    assert x[3].empty and x[3].note == "no gradient: tf.round has no gradient (None)"
    assert x[1].nonfinite_text == "NaN 1" and x[1].series.nonfinite.nan_x.tolist() == [120]
    assert x[1].verdict == "surrogate" and x[4].verdict is None
    assert x[1].color == F.MODE_COLORS["custom"] and x[4].dash == "dash" and x[1].dash == "solid"


def test_row_shares_y_range_so_equal_things_look_equal(results):
    fig = F.build_figure(results, "values")
    ranges = {p.y_range for p in fig.panels[0]}
    assert len(ranges) == 1
    lo, hi = ranges.pop()
    assert hi > 50.0 and lo < 0.0  # the spike and the zeros of default both fit
    assert fig.panels[1][0].y_range == pytest.approx((0.9, 1.1))  # constant ones


def test_every_view_builds(results):
    for view in F.VIEWS:
        fig = F.build_figure(results, view)
        assert fig.view == view and fig.shape[0] == 2
    sc = F.build_figure(results, "scatter")
    assert [c.label for c in sc.columns] == [
        "torch · custom vs default",
        "torch · custom vs numeric",
        "tf · custom vs default",
    ]
    assert sc.panels[0][2].note.startswith("no gradient")
    assert sc.panels[0][0].x_range == sc.panels[0][0].y_range
    hm = F.build_figure([ste_result("torch", shape=(20, 30))], "heatmap")
    assert hm.panels[0][1].heatmap.data.shape == (20, 30)
    assert hm.panels[0][0].y_range == hm.panels[0][1].y_range  # shared colour range per row
    assert F.build_figure(results, "heatmap").panels[0][0].note.startswith("heatmap needs a 2-D")


def test_big_tensor_panels_are_small(results):
    big = [ste_result("torch", n=1_000_000, spike_at=999, nan_at=(7, 500_000))]
    fig = F.build_figure(big, "values", buckets=500)
    p = fig.panels[0][1]
    assert p.series.x.size <= 1000 and p.series.y.max() == 50.0
    assert p.series.nonfinite.nan_x.tolist() == [7, 500_000]
    assert p.info == "1,000,000 elements, min/max of 500 buckets"


def test_row_views_and_selection(results):
    fig = F.build_figure(results, "values", row_views={"out": "histogram"})
    assert fig.view == "mixed" and fig.rows[1].view == "histogram"
    assert fig.panels[1][0].hist is not None
    row = F.select_row(fig, "out")
    assert row.shape == (1, 5) and row.view == "histogram"
    one = F.select_panel(fig, "x", ("torch", "custom"))
    assert one.shape == (1, 1) and one.panels[0][0].title == "torch · custom"
    assert [e.label for e in one.legend] == ["custom", "PyTorch"]
    with pytest.raises(KeyError):
        F.select_row(fig, "nope")
    with pytest.raises(IndexError):
        F.select_panel(fig, 0, 9)
    with pytest.raises(ValueError, match="use one of"):
        F.build_figure(results, "pie")


def test_verdicts_from_comparison_objects(results):
    from gradviz.compare import compare_result

    comps = [compare_result(r) for r in results]
    v = F.verdicts_from(comps)
    assert v[("torch", "round_ste", "x")] == comps[0].tensors[0].verdict
    fig = F.build_figure(results, "values", comps)
    assert set(fig.rows[0].verdicts) == {"torch", "tf"}


def test_several_ops_prefix_row_labels():
    rs = [ste_result("torch", n=10, op="a"), ste_result("torch", n=10, op="b")]
    fig = F.build_figure(rs)
    assert [r.label.split(":")[0] for r in fig.rows] == ["a", "a", "b", "b"]
    assert np.isfinite(fig.panels[2][1].y_range).all()


def test_log_scale_is_part_of_the_description(results):
    """One log transform for window and exports: log10 |g| values, zeros counted, one y range
    per row, a label that says log10; the other views and a linear figure are untouched."""
    lin = F.build_figure(results, "values")
    fig = F.build_figure(results, "values", log_scale=True)
    x = fig.panels[0]
    custom = x[1]  # ones + noise, a spike of 50, one NaN
    g = results[0].tensor("x").grads["custom"]
    finite = g[np.isfinite(g)]
    assert custom.log_y and custom.ylabel == "log10 |∂loss/∂x|"
    np.testing.assert_allclose(
        np.sort(custom.series.y), np.sort(np.log10(np.abs(finite))), rtol=1e-6
    )
    assert custom.nonfinite_text == "NaN 1" and custom.series.nonfinite.nan_x.size == 0
    default = x[0]  # all zero: a note, no curve
    assert default.series is None and default.note == "all zero: nothing to draw on a log scale"
    numeric = x[2]
    assert numeric.series is None and numeric.ylabel == "log10 |∂loss/∂x|"
    assert {p.y_range for p in x if p.series is not None} == {custom.y_range}
    lo, hi = custom.y_range
    assert lo < np.log10(np.abs(finite).min()) and hi > np.log10(50.0)
    out = fig.panels[1]  # ones: log10 1 = 0 in every mode
    assert all(np.all(p.series.y == 0) for p in out if p.series is not None)
    assert not any(p.log_y for row in lin.panels for p in row)
    assert all("log" not in p.ylabel + p.info for row in lin.panels for p in row)
    hist = F.build_figure(results, "histogram", log_scale=True)
    assert not any(p.log_y for row in hist.panels for p in row)
