"""An empty tensor has nothing to compare (issue 26): a wrong backward on one read `match`, every
mode agreeing on no element. It reads `unchecked`, saying why, in both frameworks."""

import pytest
from op_runs import run

from gradviz.compare import compare_result

OPS = {
    "torch": """\
    import torch

    import gradviz


    @gradviz.op(inputs={"x": (0, 3)})
    class WrongOnEmpty(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 5
""",
    "tf": """\
    import tensorflow as tf

    import gradviz


    @gradviz.op(inputs={"x": (0, 3)})
    @tf.custom_gradient
    def wrong_on_empty(x):
        def grad(g):
            return g * 5
        return x * 2, grad
""",
}


@pytest.mark.parametrize("fw, qualname", [("torch", "WrongOnEmpty"), ("tf", "wrong_on_empty")])
def test_an_empty_tensor_reads_unchecked_not_match(engine, write_module, fw, qualname):
    path = write_module(f"empty_{fw}.py", OPS[fw])
    res = run(engine, path, qualname, fw)
    assert res.tensor("x").grads["custom"].shape == (0, 3)
    x = {t.name: t for t in compare_result(res).tensors}["x"]
    assert x.verdict == "unchecked" and "x is empty (shape (0, 3))" in x.explanation
