"""TensorFlow ops that pass or fail each contract check (tests/test_checks_tf.py)."""
import numpy as np
import tensorflow as tf

TWO = np.float32(2.0)


@tf.custom_gradient
def square(x):
    """Passes every check that applies to TensorFlow."""
    def grad(dy):
        return dy * 2 * x
    return x * x, grad


@tf.custom_gradient
def square_numpy(x):
    """compiled, vmap: the gradient goes through .numpy(), which a graph cannot run."""
    def grad(dy):
        return dy * tf.constant(2 * x.numpy())
    return x * x, grad


@tf.custom_gradient
def square_stopped(x):
    """double_backward: stop_gradient in the gradient: the second derivative is a silent zero."""
    def grad(dy):
        return dy * 2 * tf.stop_gradient(x)
    return x * x, grad


@tf.custom_gradient
def square_half_stopped(x):
    """double_backward: right at first order (2 x), but half of it is cut from the graph: its
    second derivative is 1 x the upstream where the true one is 2."""
    def grad(dy):
        return dy * (x + tf.stop_gradient(x))
    return x * x, grad


@tf.custom_gradient
def square_f32const(x):
    """autocast: a float32 constant times a bfloat16 upstream."""
    def grad(dy):
        return dy * tf.constant(TWO) * x
    return x * x, grad


@tf.custom_gradient
def square_cancel(x):
    """precision: float32 rounding in ((x + 1e5) - 1e5), right in float64."""
    def grad(dy):
        return dy * ((x + 1e5) - 1e5) * 2
    return x * x, grad


@tf.custom_gradient
def square_wrong(x):
    """precision: 2.01 x instead of 2 x."""
    def grad(dy):
        return dy * 2.01 * x
    return x * x, grad


@tf.custom_gradient
def scaled(x, s):
    """x * s for a scalar or an elementwise s."""
    def grad(dy):
        return dy * s, tf.reduce_sum(dy * x) if len(s.shape) == 0 else dy * x
    return x * s, grad


class ScaleLayer(tf.keras.layers.Layer):
    """autocast: a Layer with a weight under mixed_bfloat16: passes."""
    def build(self, input_shape):
        self.scale = self.add_weight(name="scale", shape=(), initializer="ones")

    def call(self, x):
        return scaled(x, tf.cast(self.scale, x.dtype))


class DoubleLayer(tf.keras.layers.Layer):
    """autocast: scales its input (bfloat16 under mixed_bfloat16) by a float32 constant."""
    def call(self, x):
        return scaled(x, tf.constant(TWO))


@tf.custom_gradient
def square_cancel_traced(x):
    """compiled, vmap: rounds as square_cancel does and, only when traced (tf.function,
    tf.vectorized_map), returns 2.02 x for 2 x: wrong in float64 too, so still a failure."""
    def grad(dy):
        k = 2.0 if tf.executing_eagerly() else 2.02
        return dy * ((x + 1e5) - 1e5) * k
    return x * x, grad


def _normalise(x):
    mu = tf.reduce_mean(x, -1, keepdims=True)
    rstd = tf.math.rsqrt(tf.reduce_mean(tf.square(x - mu), -1, keepdims=True) + 1e-5)
    return (x - mu) * rstd, rstd


@tf.custom_gradient
def layer_norm(x):
    """autocast: passes. Under upstream ones its true gradient cancels to 0 (float32 reads
    ~1e-7), which bfloat16's own rounding cannot meet in relative terms."""
    xh, rstd = _normalise(x)

    def grad(dy):
        mean_dy = tf.reduce_mean(dy, -1, keepdims=True)
        return rstd * (dy - mean_dy - xh * tf.reduce_mean(dy * xh, -1, keepdims=True))
    return xh, grad


@tf.custom_gradient
def layer_norm_bf16_slip(x):
    """autocast: fails. Fed bfloat16 its backward takes a 'fast path' that drops the mean
    terms: off by the gradient's whole size, which upstream ones hides in float32 (~0 there)."""
    xh, rstd = _normalise(x)

    def grad(dy):
        if dy.dtype == tf.bfloat16:
            return rstd * dy
        mean_dy = tf.reduce_mean(dy, -1, keepdims=True)
        return rstd * (dy - mean_dy - xh * tf.reduce_mean(dy * xh, -1, keepdims=True))
    return xh, grad


@tf.custom_gradient
def clip_quantise(x):
    """autocast: passes. A straight-through quantiser inside [-2, 2]: bfloat16 rounds an input
    just above 2 onto the bound, whose gradient flips from 0 to 1 there (one element)."""
    def grad(dy):
        return dy * tf.cast(tf.abs(x) <= 2.0, dy.dtype)
    return tf.round(tf.clip_by_value(x, -2.0, 2.0) * 4.0) / 4.0, grad
