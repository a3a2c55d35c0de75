"""A backward that returns an integer gradient (issue 26, minor): the verdict said "does not use
its incoming gradient"; it says the gradient is an integer one that drops every fraction, and
GV103 is an error saying the same, in both frameworks."""

import pytest
from op_runs import run

from gradviz.compare import compare_result
from gradviz.diagnostics import diagnose

OPS = {
    "torch": """\
    import torch


    class IntGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).to(torch.int64)
""",
    "tf": """\
    import tensorflow as tf


    @tf.custom_gradient
    def int_grad(x):
        def grad(g):
            return tf.cast(g * 2, tf.int32)
        return x * 2, grad
""",
}


@pytest.mark.parametrize(
    "fw, qualname, dtype", [("torch", "IntGrad", "int64"), ("tf", "int_grad", "int32")]
)
def test_an_integer_gradient_is_named_as_one(engine, write_module, fw, qualname, dtype):
    path = write_module(f"int_grad_{fw}.py", OPS[fw])
    res = run(engine, path, qualname, fw)
    assert res.tensor("x").grad_dtypes == {"custom": dtype}
    x = {t.name: t for t in compare_result(res).tensors}["x"]
    assert x.verdict == "differs"
    assert f"the backward returns an integer gradient ({dtype})" in x.explanation
    assert "does not use its incoming gradient" not in x.explanation
    [f] = [f for f in diagnose(res) if f.code == "GV103-grad-dtype"]
    assert f.severity == "error" and "drops the fraction of every element" in f.message
    assert not [f for f in diagnose(res) if f.code == "GV108-upstream-unused"]
