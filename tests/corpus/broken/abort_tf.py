"""A tf.custom_gradient function whose forward calls os.abort() (SIGABRT, marked line)."""
import os

import tensorflow as tf


@tf.custom_gradient
def abort_forward(x):
    def grad(upstream):
        return upstream
    os.abort()  # FAILS HERE
    return x * 2.0, grad
