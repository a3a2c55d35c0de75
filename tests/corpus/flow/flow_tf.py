"""The TensorFlow twins of flow_torch.py (same names, same expected flow)."""
import tensorflow as tf

import gradviz

LAMBDA = 0.5


@gradviz.op(name="reverse_grad")
@tf.custom_gradient
def reverse_grad(x):
    def grad(g):
        return -LAMBDA * g
    return tf.identity(x), grad


@gradviz.op(name="sign_ste")
@tf.custom_gradient
def sign_ste(x):
    def grad(g):
        return g * tf.cast(tf.abs(x) <= 1, g.dtype)
    return tf.sign(x), grad


@gradviz.op(name="smooth_tanh")
@tf.custom_gradient
def smooth_tanh(x):
    y = tf.tanh(x)

    def grad(g):
        return g * (1 - y * y)
    return y, grad
