"""Tutorial: rewrite the gradient of a TensorFlow op (the TF twins of tutorial_torch.py).

`@tf.custom_gradient` wraps a function that returns TWO things: the forward output and a
function `grad(upstream)` returning one gradient per tensor input, in the same order.

Keras 3 notes (older tutorials break on these):
  * `self.weights` is a read-only property of every Layer: create weights with
    `self.add_weight(...)` and never assign `self.weights = ...`.
  * A Keras variable passed into a custom_gradient function must be turned into a tensor
    first (`tf.convert_to_tensor`), so that its gradient flows through the `grad` function.
"""
import keras
import tensorflow as tf

import gradviz


@gradviz.op(name="mul_weights")
@tf.custom_gradient
def mul_weights(x, weights):
    """out = x * weights, element-wise, with a hand-written gradient."""
    def grad(upstream):
        # d(x*w)/dx = w and d(x*w)/dw = x, times the incoming gradient.
        return upstream * weights, upstream * x
    return x * weights, grad


@gradviz.op(name="mul_layer")
class MulLayer(keras.layers.Layer):
    """A Keras layer owning trainable weights, whose gradient comes from mul_weights' grad."""

    def __init__(self, size=200, **kwargs):
        super().__init__(**kwargs)
        # The variable name "weights" matches the torch layer, so gradviz seeds both identically.
        # Stored as `self.w` because `self.weights` is reserved by Keras.
        self.w = self.add_weight(name="weights", shape=(size,), initializer="ones")

    def call(self, x):
        return mul_weights(x, tf.convert_to_tensor(self.w))


@gradviz.op(name="round_ste")
@tf.custom_gradient
def round_ste(x):
    """Straight-through estimator: tf.round forward, identity gradient backward.

    TF registers no gradient for tf.round (its default gradient is None, not zero), so without
    the custom gradient nothing would flow back at all: gradviz shows "no gradient" in the
    default column and the verdict `surrogate` (custom gives a gradient where the true
    derivative, as numeric measures it, is 0).
    """
    def grad(upstream):
        return upstream
    return tf.round(x), grad
