"""TensorFlow ops for the pytest plugin's test; what each should give is in its comment."""
import tensorflow as tf

import gradviz


@gradviz.op(name="round_ste")
@tf.custom_gradient
def round_ste(x):          # passes: surrogate
    return tf.round(x), lambda g: g


@tf.custom_gradient
def cube_wrong(x):         # fails: differs
    def grad(g):
        return 3.0 * g * x
    return x * x * x, grad
