"""A softmax whose backward is wrong in a way upstream ones cannot see: with ones every gradient
is 0 and GV304 says the match checks nothing; a random upstream shows it differs (real workers)."""

import numpy as np
import pytest
from op_runs import run, verdicts

from gradviz.app.analysis import analyze
from gradviz.model import RunSettings

SOFTMAX = {
    "torch": (
        """
import torch

class Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.softmax(x, dim=0)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, g):
        (s,) = ctx.saved_tensors
        return s * (g - g.mean())       # should be s * (g - (g * s).sum())
""",
        "Softmax",
    ),
    "tf": (
        """
import tensorflow as tf

@tf.custom_gradient
def softmax(x):
    s = tf.nn.softmax(x, axis=0)
    def grad(g):
        return s * (g - tf.reduce_mean(g))
    return s, grad
""",
        "softmax",
    ),
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_ones_upstream_hides_a_wrong_softmax_backward_and_says_so(engine, write_module, fw):
    """On the op graph the upstream probe (a second, random upstream) shows the wrong backward
    apart; where no probe is taken (the seed graph) every gradient is 0 under ones, the verdict
    is a match of this loss only, and GV304 says the run cannot tell."""
    src, qualname = SOFTMAX[fw]
    path = write_module(f"softmax_{fw}.py", src)
    ones = run(engine, path, qualname, fw)
    np.testing.assert_allclose(ones.tensor("x").grads["custom"], 0.0, atol=1e-7)
    assert verdicts(ones)["x"] == "differs"  # the probe saw it
    assert not [f for f in analyze(ones).findings if f.code == "GV304-upstream-blind"]
    seed = run(engine, path, qualname, fw, RunSettings(graph="seed"))
    assert seed.tensor("a").probe is None and verdicts(seed)["a"] == "match"
    [f] = [f for f in analyze(seed).findings if f.code == "GV304-upstream-blind"]
    assert f.severity == "warning" and f.tensor == "a" and "random" in f.fix
    rand = run(engine, path, qualname, fw, RunSettings(upstream="random"))
    assert verdicts(rand)["x"] == "differs"
    assert not [f for f in analyze(rand).findings if f.code == "GV304-upstream-blind"]
