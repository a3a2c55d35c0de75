"""A forward that draws random numbers (a dropout mask) draws the same ones in every mode:
custom and default are compared on one mask, not called a changed forward; the numeric reference
says it cannot be taken (real workers)."""

import numpy as np
import pytest
from op_runs import run, verdicts

from gradviz.app.analysis import analyze

DROPOUT = {
    "torch": (
        """
import torch

class DropoutSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = (torch.rand_like(x) > 0.5).to(x.dtype)
        ctx.save_for_backward(mask)
        return x * mask * 2

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        return g * mask * 2
""",
        "DropoutSTE",
    ),
    "tf": (
        """
import tensorflow as tf

@tf.custom_gradient
def dropout_ste(x):
    mask = tf.cast(tf.random.uniform(tf.shape(x)) > 0.5, x.dtype)
    def grad(g):
        return g * mask * 2.0
    return x * mask * 2.0, grad
""",
        "dropout_ste",
    ),
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_a_random_mask_is_the_same_in_custom_and_default(engine, write_module, fw):
    src, qualname = DROPOUT[fw]
    path = write_module(f"dropout_{fw}.py", src)
    res = run(engine, path, qualname, fw)
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], x.grads["default"])
    assert set(np.unique(x.grads["custom"])) == {0.0, 2.0}  # one mask, upstream ones
    np.testing.assert_array_equal(res.outputs["custom"], res.outputs["default"])
    assert verdicts(res)["x"] == "match"
    assert res.mode_errors["numeric"].type == "ForwardNotRepeatable"
    assert "GV201-forward-changed" not in {f.code for f in analyze(res).findings}
    again = run(engine, path, qualname, fw)  # the same seed, the same mask
    np.testing.assert_array_equal(again.tensor("x").grads["custom"], x.grads["custom"])
