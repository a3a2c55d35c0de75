"""Verdict classes of issue 24, in TensorFlow: the twins of classes_torch.py (see there);
each docstring ends with the verdict its `x` reads."""
import numpy as np
import tensorflow as tf

import gradviz  # noqa: F401  (ops are found without marks)

SCALE = 100.0


@tf.custom_gradient
def no_graph_forward(x):
    """An exact gradient for a forward tf cannot differentiate (numpy_function).
    verdict: match"""
    y = tf.numpy_function(lambda a: (np.tanh(a) * 3.0).astype(a.dtype), [x], x.dtype)
    y.set_shape(x.shape)

    def grad(g):
        return g * 3.0 * (1 - tf.tanh(x) ** 2)
    return y, grad


@tf.custom_gradient
def no_graph_wrong(x):
    """The same forward with a gradient twice too big. verdict: differs"""
    y = tf.numpy_function(lambda a: (np.tanh(a) * 3.0).astype(a.dtype), [x], x.dtype)
    y.set_shape(x.shape)

    def grad(g):
        return g * 6.0 * (1 - tf.tanh(x) ** 2)
    return y, grad


@tf.custom_gradient
def stable_softplus(x):
    """softplus(100 x) / 100 through tf.where: the default is NaN where x > 0.89 (0 * inf in the
    untaken branch); the custom gradient is the exact sigmoid(100 x). verdict: match"""
    z = SCALE * x
    y = tf.where(z > 0, z + tf.math.log1p(tf.exp(-z)), tf.math.log1p(tf.exp(z))) / SCALE

    def grad(g):
        return g * tf.sigmoid(z)
    return y, grad


@tf.custom_gradient
def round_ste(x):
    """round forward, identity gradient. verdict: surrogate"""
    def grad(g):
        return g
    return tf.round(x), grad


class StopGradientSTE(tf.keras.layers.Layer):
    """The same estimator written with tf.stop_gradient, no gradient of its own.
    verdict: surrogate"""
    def call(self, x):
        return x + tf.stop_gradient(tf.round(x) - x)


@tf.custom_gradient
def stochastic_ste(x):
    """sign forward; the gradient passes where a fresh coin says so: a random surrogate.
    verdict: surrogate"""
    def grad(g):
        return g * tf.cast(tf.random.uniform(tf.shape(g)) < 0.5, g.dtype) * 2.0
    return tf.sign(x), grad


@tf.custom_gradient
def backwards_ste(x):
    """round forward with the negated identity as its surrogate: against the step's direction
    (GV309). verdict: surrogate"""
    def grad(g):
        return -g
    return tf.round(x), grad


@tf.custom_gradient
def reversal(x):
    """Gradient reversal. verdict: differs"""
    def grad(g):
        return -g
    return tf.identity(x), grad


@tf.custom_gradient
def last_element_missed(x):
    """x**2 whose gradient leaves the last element 0: one of 200 off numeric, no kink there
    (default agrees with numeric). verdict: differs"""
    def grad(g):
        full = 2 * x * g
        return tf.concat([full[:-1], tf.zeros_like(full[-1:])], 0)
    return x * x, grad
