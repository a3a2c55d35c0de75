"""Ops for the reproduction scripts' tests (tests/test_repro_graphs.py): TensorFlow."""
import tensorflow as tf

import gradviz


@tf.custom_gradient
def cube(x):
    def grad(g):
        return 3.0 * g * x * x
    return x * x * x, grad


@tf.custom_gradient
def half_tanh(x):
    y = tf.tanh(x)

    def grad(g):
        return 0.5 * g * (1 - y * y)
    return y, grad


@tf.custom_gradient
def _wrong_square(x):
    def grad(g):
        return g * x           # half the true gradient, hidden in a helper
    return x * x, grad


@tf.custom_gradient
def through_a_helper(x):
    """custom_gradient around another one: the default removes both"""
    y = _wrong_square(x)

    def grad(g):
        return g * 2.0 * x
    return y, grad


@gradviz.op(reference=lambda x: x * x * x + 0.25 * x)
@tf.custom_gradient
def cube_with_reference(x):
    def grad(g):
        return 3.0 * g * x * x
    return x * x * x, grad
