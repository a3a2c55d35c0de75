"""Each failure of tests/test_checks_tf.py confirmed by TensorFlow itself, in a process of its
own (the test process must not import tensorflow: tests/test_gui.py checks that). Prints one JSON
object: what -> "ok" or "ExceptionType: message" (or a value)."""
import json
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tf_ops as ops  # noqa: E402


def outcome(fn) -> str:
    try:
        out = fn()
        return "ok" if out is None else str(out)
    except Exception as exc:  # noqa: BLE001 - the outcome is the point
        return f"{type(exc).__name__}: {exc}"


@tf.function
def numpy_step(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = ops.square_numpy(x)
    return tape.gradient(y, x)


def second_derivative_stopped():
    x = tf.constant([1.0, 2.0], tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = ops.square_stopped(x)
        g = inner.gradient(y, x)
    gg = outer.gradient(g, x)
    return "zero" if gg is None or np.all(gg.numpy() == 0) else gg.numpy().tolist()


def bfloat16_grad():
    x = tf.constant([1.0, 2.0], tf.bfloat16)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = ops.square_f32const(x)
    tape.gradient(y, x)


def mixed_layer():
    old = tf.keras.config.dtype_policy()
    try:
        tf.keras.config.set_dtype_policy("mixed_bfloat16")
        ops.DoubleLayer()(tf.constant([1.0, 2.0]))
    finally:
        tf.keras.config.set_dtype_policy(old)


print(json.dumps({
    "tf.function square_numpy": outcome(lambda: numpy_step(tf.constant([1.0, 2.0]))),
    "second derivative square_stopped": outcome(second_derivative_stopped),
    "bfloat16 square_f32const": outcome(bfloat16_grad),
    "mixed_bfloat16 DoubleLayer": outcome(mixed_layer),
}))
