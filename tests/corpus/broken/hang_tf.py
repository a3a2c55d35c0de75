"""A tf.custom_gradient function whose grad never returns (a pure-Python busy loop)."""
import tensorflow as tf


@tf.custom_gradient
def hang_backward(x):
    def grad(upstream):
        while True:  # FAILS HERE  (never returns)
            pass
    return x * 2.0, grad
