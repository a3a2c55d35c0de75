"""A Keras 3 layer owning a weight "bias" of shape (200,), computing x + bias via custom_gradient.

Same weight name and op names as layer_with_params_torch.py, so both get the same seeded bias.
Expected with upstream ones: out = x + bias; dL/dx = ones; dL/dbias = ones (all modes match).
"""
import keras
import tensorflow as tf

import gradviz


@gradviz.op(name="add_bias")
@tf.custom_gradient
def add_bias(x, bias):
    def grad(upstream):
        return upstream, upstream
    return x + bias, grad


@gradviz.op(name="bias_layer")
class BiasLayer(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.bias = self.add_weight(name="bias", shape=(200,), initializer="zeros")

    def call(self, x):
        return add_bias(x, tf.convert_to_tensor(self.bias))
