"""Traps: TensorFlow / Keras 3 custom-gradient mistakes from well-known tutorials.

Every op below is WRONG on purpose, so gradviz can show what each mistake looks like.
Behaviour noted here was checked with TensorFlow 2.21 and Keras 3.
"""
import keras
import tensorflow as tf

import gradviz


@gradviz.op(name="trap_assign_weights")
class AssignWeights(keras.layers.Layer):
    """Keras 2 tutorials wrote `self.weights = ...`; in Keras 3 `weights` is a read-only property.

    Constructing this layer raises
    "AttributeError: property 'weights' of 'AssignWeights' object has no setter".
    Fix: `self.w = self.add_weight(name="weights", shape=(200,))` (see tutorial_tf.py).
    """

    def __init__(self):
        super().__init__()
        self.weights = self.add_weight(name="weights", shape=(200,))  # WRONG: raises here

    def call(self, x):
        return x * self.weights


@gradviz.op(name="trap_call_returns_grad_fn")
class CallReturnsGradFn(keras.layers.Layer):
    """call() returns `(output, grad_fn)` as if it were a custom_gradient function.

    Without the @tf.custom_gradient decorator the grad_fn is just a second output: nothing is
    registered. The layer's result is a tuple, and gradients flow through tf.round's own
    gradient, which in TF is None: the output is disconnected from the input.
    Fix: put the (output, grad) pair in a @tf.custom_gradient function and call that.
    """

    def call(self, x):
        def grad_fn(upstream):
            return upstream
        return tf.round(x), grad_fn   # WRONG: grad_fn is never used by TensorFlow


# A Keras 3 variable (on the TF backend it wraps a tf.Variable), as a layer's weight would be.
_SCALE = keras.Variable(tf.ones((200,)), name="scale")


@gradviz.op(name="trap_variable_without_variables_arg")
@tf.custom_gradient
def scale_by_variable(x):
    """The forward reads a Keras (tf) variable directly, and grad() has no `variables=` argument.

    TF 2.21 refuses this as soon as the function is called (eager, with or without a tape):
    "TypeError: @tf.custom_gradient grad_fn must accept keyword argument 'variables', since
    function uses variables: [<tf.Variable ...>]".
    Fix: pass `tf.convert_to_tensor(var)` in as an argument (see tutorial_tf.py), or write
    `def grad(upstream, variables=None)` returning `(input_grads, variable_grads)`.
    """
    def grad(upstream):   # WRONG: must accept variables=... since the forward reads a variable
        return upstream * _SCALE
    return x * _SCALE, grad


@gradviz.op(name="trap_wrong_grad_shape")
@tf.custom_gradient
def wrong_grad_shape(x):
    """grad() returns a scalar where a gradient of x's shape (200,) is expected.

    TF 2.21 does NOT check: tape.gradient(loss, x) silently returns the scalar sum(upstream).
    Only when the gradient is combined with another one (x used twice) does it fail, far
    from here ("Inputs to operation AddN ... must have the same size and shape"); a gradient
    of the wrong length (e.g. shape (5,)) is likewise passed back unchecked.
    """
    def grad(upstream):
        return tf.reduce_sum(upstream)   # WRONG: should be upstream * 2, shape like x
    return x * 2.0, grad
