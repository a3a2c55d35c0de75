"""Ops shaped the way real code is: an input the output ignores (a `match`), outputs marked
non-differentiable (out of the loss), and forwards that write their input in place."""

import numpy as np
import pytest
from op_runs import run, verdicts

from gradviz.compare import compare_result
from gradviz.diagnostics import diagnose
from gradviz.model import RunRequest, RunSettings


def test_input_the_output_ignores_is_a_noted_match(engine, write_module):
    path = write_module(
        "ignores.py",
        """\
        import tensorflow as tf
        import torch


        class Twice(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, unused):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return 2 * g, None


        @tf.custom_gradient
        def twice(x, unused):
            def grad(dy):
                return 2 * dy, None
            return x * 2, grad
    """,
    )
    for qualname, fw in (("Twice", "torch"), ("twice", "tf")):
        res = run(engine, path, qualname, fw)
        t = res.tensor("unused")
        np.testing.assert_array_equal(t.grads["numeric"], np.zeros(200))
        comp = {c.name: c for c in compare_result(res).tensors}
        assert comp["unused"].verdict == "match", (fw, comp["unused"].explanation)
        assert "does not depend on unused" in comp["unused"].explanation
        assert comp["x"].verdict == "match"
        codes = {f.code for f in diagnose(res, compare_result(res))}
        assert "GV501-no-default-path" not in codes, fw


def test_non_differentiable_outputs_stay_out_of_the_loss(engine, write_module):
    path = write_module(
        "nondiff.py",
        """\
        import torch


        class SortWithOrder(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 3
                sign = torch.sign(x) * x.abs()      # differentiable in autograd, marked not
                ctx.mark_non_differentiable(sign)
                return y, sign

            @staticmethod
            def backward(ctx, g, g_sign):
                return 3 * g
    """,
    )
    res = run(engine, path, "SortWithOrder", "torch")
    x = res.tensor("x")
    np.testing.assert_allclose(x.grads["custom"], 3 * np.ones(200))
    np.testing.assert_allclose(x.grads["default"], 3 * np.ones(200))
    np.testing.assert_allclose(x.grads["numeric"], 3 * np.ones(200), rtol=1e-5)
    assert verdicts(res)["x"] == "match"
    assert res.tensor("out1") is None  # not part of the loss, not a tensor to judge


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_an_op_with_only_integer_outputs_says_there_is_no_loss(engine, write_module, fw):
    """A quantiser returning only its int codes: no loss to differentiate. It said
    "TypeError: Cannot convert 0.0 to EagerTensor of dtype int32" (tf)."""
    src = {
        "torch": """\
        import torch

        class Codes(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return (x > 0).to(torch.int64)

            @staticmethod
            def backward(ctx, g):
                return g
    """,
        "tf": """\
        import tensorflow as tf

        @tf.custom_gradient
        def codes(x):
            return tf.cast(x > 0, tf.int32), lambda g: g
    """,
    }[fw]
    path = write_module(f"codes_{fw}.py", src)
    [res] = engine.run(
        [RunRequest(str(path), "Codes" if fw == "torch" else "codes", fw, RunSettings())]
    )
    assert res.status == "error" and res.error.type == "OpOutputError"
    assert "no loss to differentiate" in res.error.message
    assert res.error.where.startswith(str(path))


def test_in_place_forward_keeps_the_input_value_and_is_named(engine, write_module):
    path = write_module(
        "inplace.py",
        """\
        import torch


        class ClampInPlace(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                y = torch.clamp(x, -1, 1, out=x)
                return y

            @staticmethod
            def backward(ctx, g):
                return g
    """,
    )
    [res] = engine.run([RunRequest(str(path), "ClampInPlace", "torch", RunSettings())])
    x = res.tensor("x")
    assert x is not None and np.abs(x.value).max() > 1.5  # the value before the op ran
    assert "x" in res.inplace_inputs
    codes = [
        f for f in diagnose(res, compare_result(res)) if f.code == "GV605-inplace-no-mark-dirty"
    ]
    assert codes and "'x'" in codes[0].message


def test_a_forward_taking_star_args_says_it_cannot_be_fed(engine, write_module):
    path = write_module(
        "varargs.py",
        """\
        import torch

        class SumAll(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *xs):
                return sum(xs)

            @staticmethod
            def backward(ctx, g):
                return g, g
    """,
    )
    [res] = engine.run([RunRequest(str(path), "SumAll", "torch", RunSettings())])
    assert res.status == "error" and "forward takes *xs" in res.error.message
    assert res.error.where.startswith(str(path))  # it said "the op returned int"


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_a_dict_output_is_its_tensors_in_order(engine, write_module, fw):
    """A Module / Layer returning {"y": 3x, "total": sum(x)} (Hugging Face style) runs: out is y,
    out1 the total, and x gets 3 + 1 under upstream ones. It was 'the op returned dict'."""
    src = {
        "torch": """\
        import torch

        class Heads(torch.nn.Module):
            def forward(self, x):
                return {"y": x * 3.0, "total": x.sum()}
    """,
        "tf": """\
        import keras
        import tensorflow as tf

        class Heads(keras.layers.Layer):
            def call(self, x):
                return {"y": x * 3.0, "total": tf.reduce_sum(x)}
    """,
    }[fw]
    res = run(engine, write_module(f"heads_{fw}.py", src), "Heads", fw)
    assert verdicts(res) == {"x": "match", "out": "match", "out1": "match"}
    np.testing.assert_allclose(res.tensor("x").grads["custom"], 4.0)
    assert res.tensor("out").shape == (200,) and res.tensor("out1").shape == ()
