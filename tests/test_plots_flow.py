"""The flow chart description from hand-made stack results (no Qt, no framework)."""

import math

import numpy as np

from gradviz.flow import dies_at, flow_of
from gradviz.model import NumericInfo, OpInfo, RunRequest, RunResult, RunSettings, TensorResult
from gradviz.plots import flow as FL
from gradviz.plots.figure import MODE_COLORS


def stack_result(fw, grads_by_layer, absent_by_layer=None, numeric_method="full"):
    """grads_by_layer: [{mode: array}] for h1..hN (input side first)."""
    s = RunSettings(graph="stack", depth=len(grads_by_layer), shape=(4,))
    tensors = []
    for i, grads in enumerate(grads_by_layer, 1):
        absent = (absent_by_layer or [{}] * len(grads_by_layer))[i - 1]
        tensors.append(
            TensorResult(
                f"h{i}",
                "intermediate",
                (4,),
                "float32",
                np.zeros(4),
                grads=grads,
                absent=absent,
                numeric=NumericInfo(numeric_method),
            )
        )
    return RunResult(
        RunRequest("/x/ops.py", "Op", fw, s),
        OpInfo("op", fw, "function", "Op", "/x/ops.py", 1),
        tensors=tuple(tensors),
    )


def g(norm):
    return np.array([norm, 0.0, 0.0, 0.0])


def test_dead_where_zero_or_absent_and_not_where_not_computed():
    torch = stack_result(
        "torch",
        [
            {"default": g(0.0), "custom": g(0.01), "numeric": g(0.0)},
            {"default": g(0.0), "custom": g(10.0), "numeric": g(0.0)},
        ],
    )
    tf = stack_result(
        "tf",
        [{"custom": g(0.02)}, {"custom": g(20.0)}],
        [{"default": "TensorFlow returned None", "numeric": "projection"}] * 2,
        numeric_method="projection",
    )
    assert dies_at(flow_of(torch), "default") == 2  # zero at the top layer
    assert dies_at(flow_of(tf), "default") == 2  # absent: no gradient path
    assert dies_at(flow_of(tf), "numeric") is None  # not computed says nothing
    assert flow_of(tf)[0].norm == {"default": None, "custom": 0.02, "numeric": None}
    fig = FL.build_flow_figure([tf, torch], "op")
    assert [c.framework for c in fig.charts] == ["torch", "tf"]  # FRAMEWORKS order
    torch_c, tf_c = fig.charts
    assert torch_c.decades == tf_c.decades == (-2, 2)  # shared, from 0.01 to 20
    custom = {s.mode: s for s in tf_c.series}["custom"]
    assert custom.layers == (1, 2) and custom.norms == (0.02, 20.0)
    assert custom.color == MODE_COLORS["custom"] and custom.dies_at is None
    assert "numeric not computed" in tf_c.note
    assert [e.label for e in fig.legend] == ["default", "custom", "numeric"]


def test_non_finite_norms_are_not_points_and_are_named():
    r = stack_result(
        "torch", [{"default": g(1.0), "custom": g(np.nan)}, {"default": g(1.0), "custom": g(2.0)}]
    )
    chart = FL.build_flow_figure([r]).charts[0]
    custom = {s.mode: s for s in chart.series}["custom"]
    assert custom.layers == (2,)
    assert "custom not finite at layer 1" in chart.note
    assert math.isnan(flow_of(r)[0].norm["custom"])


def test_other_graphs_have_no_flow():
    r = stack_result("torch", [{"default": g(1.0)}])
    op = RunResult(RunRequest("/x/ops.py", "Op", "torch", RunSettings()), r.op, tensors=r.tensors)
    assert flow_of(op) == [] and not FL.is_stack([op]) and FL.is_stack([r])
