"""A tf.custom_gradient function whose forward raises ValueError (on the marked line)."""
import tensorflow as tf


@tf.custom_gradient
def raise_forward(x):
    def grad(upstream):
        return upstream
    raise ValueError("raise_forward_tf: forward failed on purpose")  # FAILS HERE
