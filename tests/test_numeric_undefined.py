"""Where the finite difference is NaN/Inf (the loss is not finite at or next to an input) the
numeric reference judges nothing: those elements are left out and counted (real torch worker)."""

import numpy as np
from op_runs import run

from gradviz.compare import compare_result
from gradviz.model import RunSettings

EDGE_OPS = """
import torch

import gradviz


@gradviz.op(name="sqrt_edge", inputs={"x": [0.0, 1.0, 2.0, 4.0]})
class Sqrt(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * 0.5 / y.clamp_min(1e-3)


@gradviz.op(name="log_nan_forward", inputs={"x": [-1.0, 1.0, 2.0, 4.0]})
class Log(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / x
"""
F64 = RunSettings(dtype="float64")


def _x(res):
    return next(t for t in compare_result(res).tensors if t.name == "x")


def test_a_domain_edge_leaves_one_element_unjudged(engine, write_module):
    path = write_module("edge_ops.py", EDGE_OPS)
    res = run(engine, path, "Sqrt", "torch", F64)
    x = res.tensor("x")
    np.testing.assert_allclose(x.grads["custom"], [500.0, 0.5, 0.5 / np.sqrt(2), 0.25])
    assert np.isinf(x.grads["default"][0]) and not np.isfinite(x.grads["numeric"][0])
    tc = _x(res)
    m = tc.metrics["custom~numeric"]
    assert tc.verdict == "match" and "default is NaN/Inf at 1 of 4 elements" in tc.explanation
    assert (m.n, m.n_differ, m.numeric_undefined) == (3, 0, 1)


def test_a_nan_forward_is_no_numeric_reference_not_a_difference(engine, write_module):
    path = write_module("edge_ops.py", EDGE_OPS)
    res = run(engine, path, "Log", "torch", F64)
    np.testing.assert_allclose(res.tensor("x").grads["custom"], [-1.0, 1.0, 0.5, 0.25])
    assert np.isnan(res.tensor("x").grads["numeric"]).all()  # the loss is NaN
    tc = _x(res)
    assert tc.verdict == "match" and "no usable numeric reference" in tc.explanation
    alone = run(
        engine, path, "Log", "torch", RunSettings(dtype="float64", modes=("custom", "numeric"))
    )
    assert _x(alone).verdict == "unchecked"
