"""An output that is an input tensor itself (TF and torch): its gradient is the loss's through
that output, not the input's whole gradient (a correct op read `differs` at `out`, 3 against 1)."""

import numpy as np
import pytest

from tests.op_runs import run, verdicts

ALIAS = {
    "tf": (
        """
import tensorflow as tf
import keras


@tf.custom_gradient
def passes_x(x):
    def grad(dy1, dy2):
        return dy1 + 2 * dy2
    return (x, 2.0 * x), grad


class PassThrough(keras.layers.Layer):
    def call(self, x):
        return x, x * 3.0
""",
        "passes_x",
    ),
    "torch": (
        """
import torch


class PassThrough(torch.nn.Module):
    def forward(self, x):
        return x, x * 3.0


class PassesX(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x), 2.0 * x

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 + 2 * g2
""",
        "PassesX",
    ),
}


@pytest.mark.parametrize("fw", ["tf", "torch"])
def test_an_input_returned_as_it_is_gets_the_gradient_of_its_output(engine, write_module, fw):
    from gradviz.model import RunSettings

    src, passes = ALIAS[fw]
    path = write_module(f"alias_ops_{fw}.py", src)
    for qualname, factor in ((passes, 2.0), ("PassThrough", 3.0)):
        res = run(engine, path, qualname, fw, RunSettings(shape=(3, 4)))
        assert verdicts(res) == {"x": "match", "out": "match", "out1": "match"}, qualname
        out, x = res.tensor("out"), res.tensor("x")
        for mode in ("custom", "default"):
            np.testing.assert_array_equal(out.grads[mode], np.ones((3, 4)))
            np.testing.assert_array_equal(x.grads[mode], np.full((3, 4), 1.0 + factor))
        np.testing.assert_allclose(out.grads["numeric"], np.ones((3, 4)), rtol=1e-6)


CAPTURED = """
import tensorflow as tf
import keras


class CapturedW(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

    def call(self, x):
        w = tf.convert_to_tensor(self.w)

        @tf.custom_gradient
        def f(x):
            def grad(dy):
                return dy * w
            return x * w, grad
        return f(x)
"""


def test_a_weight_a_custom_gradient_captures_is_broken_and_says_why(engine, write_module):
    # it said "no gradient path (an op without a registered gradient such as tf.round ...)"
    from gradviz.compare import compare_result
    from gradviz.model import RunSettings

    path = write_module("captured_ops.py", CAPTURED)
    res = run(engine, path, "CapturedW", "tf", RunSettings(shape=(3, 4)))
    assert verdicts(res) == {"x": "match", "w": "broken", "out": "match"}
    w, x = res.tensor("w"), res.tensor("x")
    assert "custom" not in w.grads
    np.testing.assert_allclose(w.grads["default"], x.value.sum(axis=0), rtol=1e-6)
    np.testing.assert_array_equal(x.grads["custom"], np.broadcast_to(w.value, (3, 4)))
    why = w.absent["custom"]
    assert (
        "tf.convert_to_tensor(self.w)" in why and "variables= list" in why and "tf.round" not in why
    )
    [cw] = [t for t in compare_result(res).tensors if t.name == "w"]
    assert "tf.convert_to_tensor(self.w)" in cw.explanation
