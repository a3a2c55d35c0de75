"""What a file marks with gradviz.op: `@gradviz.op` without parentheses is the op (it was replaced
by gradviz's inner function and vanished), and a marked function that is no op is named in the
skipped notes with why (it was left out in silence)."""

import numpy as np

from tests.op_runs import run, verdicts

MARKED = """
import tensorflow as tf
import gradviz


@tf.custom_gradient
def _clip_ste(x):
    def grad(dy):
        return dy * tf.cast(tf.abs(x) <= 1, dy.dtype)
    return tf.sign(x), grad


@gradviz.op
@tf.custom_gradient
def triple(x):
    def grad(dy):
        return dy * 3.0
    return x * 3.0, grad


@gradviz.op
@tf.function(jit_compile=True)
def jit_ste(x):
    return _clip_ste(x)


@gradviz.op()
def ste_round(x):
    return x + tf.stop_gradient(tf.round(x) - x)


def helper(x):
    return x
"""


def test_bare_decorator_keeps_the_op_and_a_marked_plain_function_is_named(engine, write_module):
    path = write_module("marked_ops.py", MARKED)
    [cat] = engine.load([path])
    assert cat.error is None, cat.error
    assert sorted(op.qualname for op in cat.ops) == ["_clip_ste", "triple"]
    notes = {note.split(":", 1)[0]: note for note in cat.skipped}
    assert sorted(notes) == ["jit_ste", "ste_round"]  # helper is not marked: no note
    assert "without a @tf.custom_gradient under it is not an op" in notes["jit_ste"]
    assert "Layer's call()" in notes["ste_round"]
    res = run(engine, path, "triple", "tf")
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.full(200, 3.0))
    assert verdicts(res)["x"] == "match"


def test_gradviz_op_refuses_a_name_that_is_not_a_str():
    import gradviz

    try:
        gradviz.op(3)
    except TypeError as exc:
        assert "takes a str" in str(exc)
    else:
        raise AssertionError("gradviz.op(3) did not raise")
