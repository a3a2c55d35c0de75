"""The seed tutorial's trap in Keras: a Layer with a backward-shaped method that Keras never
calls (GV607 at the line marked NEVER CALLED). Every correct gradient of x * x is 2 x."""
import keras
import tensorflow as tf


class Double(keras.layers.Layer):
    """backward() meant to give 2 * grad; the tape differentiates call itself: custom is its
    own autodiff, the custom gradient is not found (broken)."""
    def call(self, x):
        return x * x

    def backward(self, grad_output):  # NEVER CALLED
        return 2 * grad_output


@tf.custom_gradient
def square(x):
    def grad(dy):
        return 2 * x * dy
    return x * x, grad


class WithCustomGradient(keras.layers.Layer):
    """A real custom_gradient in call and a leftover custom_grad(): the finding, and the
    custom_gradient's own verdict (match)."""
    def call(self, x):
        return square(x)

    def custom_grad(self, upstream):  # NEVER CALLED
        return 2 * upstream


class CallsItsGrad(keras.layers.Layer):
    """call uses its own grad-named helper: it is called, no finding."""
    def call(self, x):
        return x * self.grad_scale(x)

    def grad_scale(self, x):
        return x


class TapeHelper(keras.layers.Layer):
    """A helper that computes gradients with a tape is no gradient formula: no finding."""
    def call(self, x):
        return x * x

    def get_gradients(self, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = self(x)
        return tape.gradient(y, x)
