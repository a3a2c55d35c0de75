"""A forward that pins float32 raises in the numeric reference's float64 evaluation: the run
stands on custom vs default, and GV303 says why at the user's line (real workers)."""

import numpy as np
import pytest
from op_runs import run, verdicts

from gradviz.app.analysis import analyze
from gradviz.app.problems import problems

PINNED = {
    "torch": (
        """
import torch

class Proj(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        w = torch.ones(200, 3, dtype=torch.float32)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        return g @ torch.ones(3, 200, dtype=g.dtype)
""",
        "Proj",
        8,
    ),
    "tf": (
        """
import tensorflow as tf

@tf.custom_gradient
def scaled(x):
    k = tf.constant(2.0)
    def grad(g):
        return g * 2.0
    return x * k, grad
""",
        "scaled",
        9,
    ),
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_float32_pinned_forward_says_why_numeric_is_missing(engine, write_module, fw):
    src, qualname, line = PINNED[fw]
    path = write_module(f"pinned_{fw}.py", src)
    res = run(engine, path, qualname, fw)
    assert "numeric" in res.mode_errors
    expected = 3.0 if fw == "torch" else 2.0  # upstream ones
    np.testing.assert_allclose(res.tensor("x").grads["custom"], expected)
    assert verdicts(res)["x"] == "match"  # custom vs default, both right
    a = analyze(res)
    [f] = [f for f in a.findings if f.code == "GV303-numeric-float64"]
    assert f.where == f"{path}:{line}" and "float64" in f.message and "x.dtype" in f.fix
    # one entry in the Diagnostics list: the finding, with the exception as its detail
    entries = [p for p in problems(("k",), a) if p.where == f.where]
    assert [p.code for p in entries] == ["GV303-numeric-float64"] and entries[0].detail
