"""The TensorFlow twins of training_grads_torch.py (issue 24, 3-5).

Expected gradients, upstream u (ones by default):
- Recomputed: out = w * x**2 through tf.recompute_grad (checkpointing): x: 2 w x u,
  w: sum(x**2 u).
- VarGrad: out = w * x**2 through a custom_gradient whose grad gives w's gradient in its
  variables= list: x: 2 w x u, w: sum(x**2 u).
- once: out = 3 x**2; its grad pops its state (a second call raises KeyError): x: 6 x u.
- TwoOutputs: y = 2 x, z = y * y (out, out1): out: u + 2 y u1, out1: u1, x: 2 (u + 2 y u1).
- FrozenScale: out = x * w * fixed.s + x * noise, fixed.s = 5 in a sublayer set
  trainable=False, noise a non-trainable weight from a random initializer, both as the layer
  built them: x: (5 w + noise) u, w: sum(5 x u); fixed.s reads "no gradient: frozen".
"""
import keras
import tensorflow as tf


class Recomputed(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.w = self.add_weight(shape=(), initializer="ones", name="w")

    def call(self, x):
        return tf.recompute_grad(lambda t: self.w * t * t)(x)


class VarGrad(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.w = self.add_weight(shape=(), initializer="ones", name="w")

    def call(self, x):
        w = self.w

        @tf.custom_gradient
        def f(t):
            def grad(dy, variables=None):
                return dy * 2.0 * w * t, [tf.reduce_sum(dy * t * t)]
            return w * t * t, grad
        return f(x)


@tf.custom_gradient
def once(x):
    state = {"scale": 3.0}

    def grad(dy):
        scale = state.pop("scale")    # frees its state: a second call raises KeyError
        return dy * 2.0 * scale * x
    return 3.0 * x * x, grad


@tf.custom_gradient
def _double(x):
    return 2.0 * x, lambda dy: 2.0 * dy


class TwoOutputs(keras.layers.Layer):
    def call(self, x):
        y = _double(x)
        return y, y * y


class _Scale(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.s = self.add_weight(shape=(), initializer=keras.initializers.Constant(5.0),
                                 name="s")


class FrozenScale(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.w = self.add_weight(shape=(), initializer="ones", name="w")
        self.noise = self.add_weight(shape=(), initializer="random_uniform", name="noise",
                                     trainable=False)
        self.fixed = _Scale()
        self.fixed.trainable = False

    def call(self, x):
        return _double(x) * 0.5 * self.w * self.fixed.s + x * self.noise
