"""Diagnostics corpus: correct TensorFlow twins of triggers_tf.py: no warning or error expected."""
import keras
import tensorflow as tf

import gradviz


@tf.custom_gradient
def times_two(x):
    def grad(upstream):
        return upstream * 2
    return x * 2, grad


@tf.custom_gradient
def mul(x, w):
    def grad(upstream):
        return upstream * w, upstream * x
    return x * w, grad


@gradviz.op(consts={"k": 3.0})
@tf.custom_gradient
def scaled(x, k=3.0):
    def grad(upstream):
        return upstream * k   # k is a keyword constant here: no gradient slot
    return x * k, grad


@tf.custom_gradient
def sine(x):
    def grad(upstream):
        return upstream * tf.cos(x)
    return tf.sin(x), grad


@tf.custom_gradient
def _gain(x, g):
    def grad(dy):
        return dy * g, dy * x
    return x * g, grad


class GainLayer(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.g = self.add_weight(name="g", shape=(200,), initializer="ones")

    def call(self, x):
        return _gain(x, tf.convert_to_tensor(self.g))


class PlainLayer(keras.layers.Layer):
    def call(self, x):
        return tf.tanh(x) * 2
