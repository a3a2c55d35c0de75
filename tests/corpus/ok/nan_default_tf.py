"""sqrt(x * x) (= |x|): the DEFAULT gradient is NaN at x = 0, and the custom gradient keeps it.

Default: d/dx sqrt(x^2) = 0.5 / sqrt(0) * 2x = inf * 0 = NaN at x = 0. Custom: x / |x| = 0/0 = NaN.
Expected with upstream ones on inputs x = [-2, -0.5, 0, 0.5, 2]:
  out = [2, 0.5, 0, 0.5, 2]; custom and default dL/dx = [-1, -1, nan, 1, 1];
  numeric (central differences) = [-1, -1, 0, 1, 1] -> verdict `non-finite` (1 NaN per mode).
"""
import tensorflow as tf

import gradviz


@gradviz.op(name="sqrt_of_square", inputs={"x": [-2.0, -0.5, 0.0, 0.5, 2.0]})
@tf.custom_gradient
def sqrt_of_square(x):
    out = tf.sqrt(x * x)

    def grad(upstream):
        return upstream * x / out   # 0/0 = NaN at x = 0, like the default
    return out, grad
