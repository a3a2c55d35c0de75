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


@tf.custom_gradient
def cos_wrong_sign(x):
    """expect: GV305-grad-sign-flipped"""
    def grad(upstream):
        return upstream * tf.sin(x)   # TRIGGER: d/dx cos(x) = -sin(x)
    return tf.cos(x), grad


@gradviz.op(inputs={"x": (3, 4), "w": (4, 5)})
@tf.custom_gradient
def matmul_transposed_grad(x, w):
    """expect: GV306-grad-transposed"""
    def grad(upstream):
        return upstream @ tf.transpose(w), tf.transpose(upstream) @ x   # TRIGGER: TF passes (5, 4) on
    return x @ w, grad


@tf.custom_gradient
def mul_swapped_grads(x, w):
    """expect: GV307-grads-swapped"""
    def grad(upstream):
        return upstream * x, upstream * w   # TRIGGER
    return x * w, grad


@gradviz.op(inputs={"x": (3, 4), "b": (4,)})
@tf.custom_gradient
def bias_tanh_wrong_axis(x, b):
    """expect: GV308-grad-wrong-axis"""
    y = tf.tanh(x + b)

    def grad(upstream):
        d = upstream * (1 - y * y)
        return d, tf.reduce_sum(d, axis=1)   # TRIGGER: shape (3,) for b (4,), passed on
    return y, grad


@tf.custom_gradient
def sin_bfloat16_grad(x):
    """expect: GV103-grad-dtype"""
    def grad(upstream):
        return tf.cast(upstream * tf.cos(x), tf.bfloat16)   # TRIGGER
    return tf.sin(x), grad


@tf.custom_gradient
def sin_bfloat16_cast_back(x):
    """expect: GV110-grad-rounded"""
    def grad(upstream):
        return tf.cast(tf.cast(upstream * tf.cos(x), tf.bfloat16), tf.float32)   # TRIGGER
    return tf.sin(x), grad


@tf.custom_gradient
def round_pushed_back(x):
    """expect: GV309-surrogate-against-step"""
    def grad(upstream):
        return -upstream   # TRIGGER
    return tf.round(x), grad


@tf.custom_gradient
def softmax_diagonal_only(x):
    """expect: GV301-grad-wrong (not GV302: under upstream ones a softmax's true gradient is 0
    everywhere, by the upstream's cancellation, not by a flat forward)"""
    y = tf.nn.softmax(x)

    def grad(dy):
        return dy * y * (1 - y)   # TRIGGER: the Jacobian's diagonal only
    return y, grad


@tf.custom_gradient
def flip_gradient(x):
    """expect: GV302-grad-surrogate (DANN's classic TF port: its forward is tf.identity, its
    gradient minus the upstream)"""
    def grad(dy):
        return tf.negative(dy)   # TRIGGER
    return tf.identity(x), grad
