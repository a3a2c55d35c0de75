"""A tf.custom_gradient function whose forward works and whose grad raises ValueError."""
import tensorflow as tf


@tf.custom_gradient
def raise_backward(x):
    def grad(upstream):
        raise ValueError("raise_backward_tf: backward failed on purpose")  # FAILS HERE
    return x * 2.0, grad
