"""Ops for the reproduction scripts' tests (tests/test_repro_graphs.py): TensorFlow."""
import keras
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


class HalfScale(keras.layers.Layer):
    """a Layer whose call decorates a custom_gradient anew; its weight gets half its gradient"""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.scale = self.add_weight(name="scale", shape=(6,), initializer="ones")

    def call(self, x):
        @tf.custom_gradient
        def times(x, s):
            def grad(g):
                return g * s, 0.5 * g * x
            return x * s, grad
        return times(x, tf.convert_to_tensor(self.scale))


@gradviz.op(reference=lambda self, x: x * tf.convert_to_tensor(self.scale) * 1.5)
class ScaledLayer(keras.layers.Layer):
    """a Layer whose reference= takes the layer first (and scales by 1.5)"""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.scale = self.add_weight(name="scale", shape=(6,), initializer="ones")

    def call(self, x):
        return cube_times(x, tf.convert_to_tensor(self.scale))


@tf.custom_gradient
def cube_times(x, s):
    def grad(g):
        return g * s, g * x
    return x * s, grad


class TracedHelper(keras.layers.Layer):
    """a Layer whose call is a tf.function around the helper's half gradient"""

    @tf.function
    def call(self, x):
        return _wrong_square(x)
