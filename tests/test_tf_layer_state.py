"""Keras layers whose forward depends on more than their inputs and trainable weights: a
non-trainable weight from a random initializer, a Dropout in training mode, a tf.random op.
Every mode must run the same forward; a forward that is random call after call has no numeric
reference, and says so (it read `differs` with errors of 1e7, GV201 blamed an override)."""

import numpy as np

from gradviz.diagnostics import diagnose
from tests.op_runs import run, verdicts

STATE_OPS = """
import tensorflow as tf
import keras


class FixedRandom(keras.layers.Layer):
    # d: non-trainable, drawn by glorot_uniform at every build
    def build(self, input_shape):
        n = input_shape[-1]
        self.b = self.add_weight(shape=(n,), initializer="ones", name="b")
        self.c = self.add_weight(shape=(n,), initializer="zeros", name="c")
        self.d = self.add_weight(shape=(n,), initializer="glorot_uniform", name="d",
                                 trainable=False)

    def call(self, x):
        return x * self.b + self.c * self.d


class Dropping(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.drop = keras.layers.Dropout(0.5)

    def call(self, x, training=True):
        return self.drop(x, training=training) * 2.0


class Bf16(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(dtype="mixed_bfloat16", **kw)

    def build(self, input_shape):
        self.s = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="s")

    def call(self, x):
        return x * self.s


class StatelessNoise(keras.layers.Layer):
    # a seeded stateless draw: repeatable, but other numbers in float64 than in float32
    def call(self, x):
        return x * tf.random.stateless_uniform(tf.shape(x), seed=[1, 2], minval=0.5,
                                               maxval=1.5, dtype=x.dtype)


class Noisy(keras.layers.Layer):
    def call(self, x):
        return x * tf.random.uniform(tf.shape(x), 0.5, 1.5, dtype=x.dtype)
"""


def _settings():
    from gradviz.model import RunSettings

    return RunSettings(shape=(3, 5))


def test_non_trainable_random_weight_is_the_same_in_every_mode(engine, write_module):
    path = write_module("state_ops.py", STATE_OPS)
    res = run(engine, path, "FixedRandom", "tf", _settings())
    assert verdicts(res) == {"x": "match", "b": "match", "c": "match", "out": "match"}
    assert not res.mode_errors
    np.testing.assert_array_equal(res.outputs["custom"], res.outputs["default"])
    x, b, c = res.tensor("x"), res.tensor("b"), res.tensor("c")
    # d(sum(x*b + c*d))/dx = b (seeded), /db = column sums of x; /dc = 3 * d, the same d in
    # custom, default and numeric (numeric builds in float64: d's float32 values)
    np.testing.assert_allclose(x.grads["custom"], np.broadcast_to(b.value, (3, 5)), rtol=1e-6)
    np.testing.assert_allclose(b.grads["custom"], x.value.sum(axis=0), rtol=1e-5)
    np.testing.assert_array_equal(c.grads["custom"], c.grads["default"])
    np.testing.assert_allclose(c.grads["numeric"], c.grads["custom"], rtol=1e-5, atol=1e-7)
    d = c.grads["custom"] / 3.0
    assert np.all(np.abs(d) > 0) and len(set(np.round(d, 6))) == 5  # drawn, not a constant
    assert "GV201-forward-changed" not in [f.code for f in diagnose(res)]


def test_dropout_in_training_has_one_mask_and_no_numeric_reference(engine, write_module):
    path = write_module("state_ops.py", STATE_OPS)
    res = run(engine, path, "Dropping", "tf", _settings())
    x = res.tensor("x")
    out = res.outputs["custom"]
    np.testing.assert_array_equal(out, res.outputs["default"])  # the same mask in both
    kept = out != 0
    assert 0 < kept.sum() < kept.size
    # out = 2 * x * mask / (1 - 0.5): the gradient is 4 where kept, 0 where dropped
    np.testing.assert_array_equal(x.grads["custom"], 4.0 * kept)
    np.testing.assert_array_equal(x.grads["default"], 4.0 * kept)
    err = res.mode_errors["numeric"]
    assert err.type == "ForwardNotRepeatable", err
    assert "not repeatable" in err.message and "Dropout" in err.message
    assert "numeric" not in x.grads
    assert verdicts(res)["x"] != "differs"
    assert "GV201-forward-changed" not in [f.code for f in diagnose(res)]


def test_global_random_op_draws_the_same_in_custom_and_default(engine, write_module):
    path = write_module("state_ops.py", STATE_OPS)
    res = run(engine, path, "Noisy", "tf", _settings())
    x = res.tensor("x")
    np.testing.assert_array_equal(res.outputs["custom"], res.outputs["default"])
    # out = x * u: the gradient is u = out / x
    u = res.outputs["custom"].astype(np.float64) / x.value.astype(np.float64)
    assert np.all((u >= 0.5) & (u < 1.5))
    np.testing.assert_allclose(x.grads["custom"], u, rtol=1e-5)
    np.testing.assert_array_equal(x.grads["custom"], x.grads["default"])
    assert res.mode_errors["numeric"].type == "ForwardNotRepeatable"
    assert "GV201-forward-changed" not in [f.code for f in diagnose(res)]


def test_mixed_bfloat16_layer_has_no_numeric_reference_and_its_output_a_gradient(
    engine, write_module
):
    # the numeric build computes in bfloat16 too (the policy is the layer's): a 1e-6 step was
    # lost in rounding, the numeric gradient read 0 and a correct layer `differs`; its
    # bfloat16 output was taken for an int tensor ("neither custom nor default was run")
    path = write_module("state_ops.py", STATE_OPS)
    res = run(engine, path, "Bf16", "tf", _settings())
    assert verdicts(res) == {"x": "match", "s": "match", "out": "match"}
    err = res.mode_errors["numeric"]
    assert err.type == "NumericLowPrecision", err
    assert "bfloat16" in err.message and "no numeric reference" in err.message
    x, s, out = res.tensor("x"), res.tensor("s"), res.tensor("out")
    np.testing.assert_array_equal(out.grads["custom"], np.ones((3, 5)))
    np.testing.assert_array_equal(out.grads["default"], np.ones((3, 5)))
    # d(sum(x * s))/dx = s, /ds = column sums of x, in bfloat16 (8 bits of mantissa)
    np.testing.assert_allclose(x.grads["custom"], np.broadcast_to(s.value, (3, 5)), rtol=2**-8)
    np.testing.assert_allclose(s.grads["custom"], x.value.sum(axis=0), rtol=2**-6, atol=2**-6)
    np.testing.assert_array_equal(x.grads["custom"], x.grads["default"])


def test_checks_of_a_random_or_low_precision_forward_are_skipped_with_why(engine, write_module):
    # a Dropout's double_backward read a 'numeric second derivative' of 8e5 (GV702), the
    # bfloat16 layer's precision check raised NumericLowPrecision (GV751 "precision bug")
    from gradviz.model import RunSettings

    path = write_module("state_ops.py", STATE_OPS)
    checks = ("double_backward", "compiled", "precision")
    res = run(engine, path, "Dropping", "tf", RunSettings(shape=(3, 5), checks=checks))
    got = {c.name: c for c in res.checks}
    assert sorted(got) == sorted(checks)
    for c in got.values():
        assert c.status == "skip" and "not repeatable" in c.message, c
    res = run(engine, path, "Bf16", "tf", RunSettings(shape=(3, 5), checks=checks))
    got = {c.name: c for c in res.checks}
    assert got["double_backward"].status == got["precision"].status == "skip"
    assert "below float64" in got["precision"].message
    assert got["compiled"].status == "pass", got["compiled"]
    assert not [f for f in diagnose(res) if f.code.startswith("GV7")]


def test_a_draw_that_depends_on_the_dtype_has_no_numeric_reference(engine, write_module):
    # the float64 numeric pass drew other numbers: it differentiated another function and a
    # correct layer read `differs` with GV301 "looks like a bug"
    path = write_module("state_ops.py", STATE_OPS)
    res = run(engine, path, "StatelessNoise", "tf", _settings())
    x = res.tensor("x")
    u = res.outputs["custom"].astype(np.float64) / x.value.astype(np.float64)
    assert np.all((u >= 0.5) & (u < 1.5))
    np.testing.assert_allclose(x.grads["custom"], u, rtol=1e-5)
    np.testing.assert_array_equal(x.grads["custom"], x.grads["default"])
    err = res.mode_errors["numeric"]
    assert err.type == "ForwardDependsOnDtype" and "not the run's forward" in err.message, err
    assert verdicts(res) == {"x": "match", "out": "match"}
    assert not [f for f in diagnose(res) if f.code.startswith("GV30")]
