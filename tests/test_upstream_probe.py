"""A backward that misuses its incoming gradient (g.mean(), g.abs()) equals the true gradient of
x * 2 under upstream ones: the probe's second, random upstream shows custom and default apart,
so the verdict is differs, not match; a right backward stays match (real workers)."""

import numpy as np
import pytest
from op_runs import run, verdicts

from gradviz.compare import compare_result
from gradviz.model import RunSettings

OPS = {
    "torch": (
        """
import torch

class MeanG(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g.mean() * 2 * torch.ones_like(g)

class AbsG(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g.abs() * 2

class Right(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2
""",
        ("MeanG", "AbsG", "Right"),
    ),
    "tf": (
        """
import tensorflow as tf

@tf.custom_gradient
def mean_g(x):
    return x * 2.0, lambda dy: tf.reduce_mean(dy) * 2.0 * tf.ones_like(dy)

@tf.custom_gradient
def abs_g(x):
    return x * 2.0, lambda dy: tf.abs(dy) * 2.0

@tf.custom_gradient
def right(x):
    return x * 2.0, lambda dy: dy * 2.0
""",
        ("mean_g", "abs_g", "right"),
    ),
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_a_backward_that_misuses_its_upstream_is_not_a_match(engine, write_module, fw):
    src, (mean, absolute, right) = OPS[fw]
    path = write_module(f"misuse_{fw}.py", src)
    for qualname in (mean, absolute):
        res = run(engine, path, qualname, fw)
        x = res.tensor("x")
        np.testing.assert_array_equal(x.grads["custom"], x.grads["default"])  # 2 under ones
        [tc] = [t for t in compare_result(res).tensors if t.name == "x"]
        assert tc.verdict == "differs", qualname
        assert "under a random one they differ" in tc.explanation
        assert not tc.metrics["custom~default, random upstream"].allclose
    ok = run(engine, path, right, fw)
    assert verdicts(ok) == {"x": "match", "out": "match"}
    assert compare_result(ok).tensors[0].metrics["custom~default, random upstream"].allclose
    # with a random upstream of its own the run needs no probe (and the bug shows directly)
    rand = run(engine, path, mean, fw, RunSettings(upstream="random"))
    assert rand.tensor("x").probe is None and verdicts(rand)["x"] == "differs"
