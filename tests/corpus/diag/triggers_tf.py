"""Diagnostics corpus: one TensorFlow / Keras 3 mistake per op; `expect:` names the code."""
import keras
import tensorflow as tf

import gradviz


@tf.custom_gradient
def one_grad_too_many(x):
    """expect: GV101-grad-count"""
    def grad(upstream):
        return upstream * 2, upstream   # TRIGGER
    return x * 2, grad


@tf.custom_gradient
def short_grad(x):
    """expect: GV102-grad-shape"""
    def grad(upstream):
        return upstream[:5] * 2   # TRIGGER: TF passes this on silently
    return x * 2, grad


@tf.custom_gradient
def float64_grad(x):
    """expect: GV103-grad-dtype"""
    def grad(upstream):
        return tf.cast(upstream * 2, tf.float64)   # TRIGGER
    return x * 2, grad


@tf.custom_gradient
def none_for_weight(x, w):
    """expect: GV105-grad-missing"""
    def grad(upstream):
        return upstream * w, None   # TRIGGER
    return x * w, grad


@gradviz.op(inputs={"x": [-1.0, 0.0, 2.0, 0.0]})
@tf.custom_gradient
def divide_by_input(x):
    """expect: GV401-non-finite"""
    def grad(upstream):
        return upstream * 2 * x / x   # TRIGGER
    return x * 2, grad


class WeightsLayer(keras.layers.Layer):
    """expect: GV601-keras-weights-assign"""
    def __init__(self):
        super().__init__()
        self.trainable_weights = [self.add_weight(name="w", shape=(200,))]   # TRIGGER

    def call(self, x):
        return x * self.trainable_weights[0]


_GAIN = keras.Variable(tf.fill((200,), 2.0), name="gain")


@tf.custom_gradient
def gain(x):
    """expect: GV602-tf-missing-variables"""
    def grad(dy):   # TRIGGER
        return dy * _GAIN
    return x * _GAIN, grad


class ReturnsLambda(keras.layers.Layer):
    """expect: GV603-call-returns-grad-fn"""
    def call(self, x):
        return tf.sign(x), lambda dy: dy   # TRIGGER


class UnpacksInputs(keras.layers.Layer):
    """expect: GV606-one-argument-unpacked"""
    def call(self, inputs):
        a, b = inputs   # TRIGGER: gradviz passes one tensor, not a list of two
        return a * b
