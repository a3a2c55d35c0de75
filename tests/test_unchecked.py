"""A gradient nothing was compared with is `unchecked`, never `match` (real workers)."""

import numpy as np
import pytest
from op_runs import run, verdicts

from gradviz.model import RunSettings

# x**2 whose backward forgets the factor 2: wrong, and only numeric or default can tell
WRONG_SQUARE = {
    "torch": """
import torch

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x
""",
    "tf": """
import tensorflow as tf

@tf.custom_gradient
def square(x):
    def grad(g):
        return g * x
    return x * x, grad
""",
}
QUALNAME = {"torch": "Square", "tf": "square"}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_custom_alone_is_unchecked_and_numeric_finds_it_wrong(engine, write_module, fw):
    path = write_module(f"wrong_square_{fw}.py", WRONG_SQUARE[fw])
    alone = run(engine, path, QUALNAME[fw], fw, RunSettings(modes=("custom",)))
    x = alone.tensor("x")
    np.testing.assert_allclose(x.grads["custom"], x.value)  # g * x with upstream ones
    assert verdicts(alone)["x"] == "unchecked"
    checked = run(engine, path, QUALNAME[fw], fw, RunSettings(modes=("custom", "numeric")))
    assert verdicts(checked)["x"] == "differs"
