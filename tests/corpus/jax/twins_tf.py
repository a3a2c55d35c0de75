"""TensorFlow third of the cube twins (twins_jax.py, twins_torch.py): x**3, grad 3x^2 g."""
import tensorflow as tf

import gradviz


@gradviz.op(name="cube")
@tf.custom_gradient
def cube_tf(x):
    def grad(g):
        return 3.0 * x ** 2 * g
    return x ** 3, grad
