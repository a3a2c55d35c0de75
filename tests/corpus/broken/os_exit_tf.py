"""A tf.custom_gradient function whose grad calls os._exit(7): the process ends at once,
with no exception and no cleanup (marked line)."""
import os

import tensorflow as tf


@tf.custom_gradient
def os_exit_backward(x):
    def grad(upstream):
        os._exit(7)  # FAILS HERE
    return x * 2.0, grad
