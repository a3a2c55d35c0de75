"""A Layer's weights through a @tf.custom_gradient's variables= list: a None entry is `broken`
with a reason that names the list; a list of the wrong length is GV101 in plain words (TF says
only "Must return gradient for each variable")."""

import numpy as np

from gradviz.diagnostics import diagnose
from tests.op_runs import verdicts

VARIABLE_GRADS = """
import tensorflow as tf
import keras


class VarNone(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

    def call(self, x):
        w = self.w
        @tf.custom_gradient
        def f(x):
            def grad(dy, variables=None):
                return dy * w, [None]
            return x * w, grad
        return f(x)


class VarCount(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")
        self.v = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="v")

    def call(self, x):
        w, v = self.w, self.v
        @tf.custom_gradient
        def f(x):
            def grad(dy, variables=None):
                return dy * w * v, [tf.reduce_sum(dy * x * v, axis=0)]
            return x * w * v, grad
        return f(x)
"""


def _run(engine, path, qualname):
    from gradviz.model import RunRequest, RunSettings

    [res] = engine.run([RunRequest(path, qualname, "tf", RunSettings(shape=(3, 4)))])
    return res


def test_a_none_variable_gradient_is_broken_and_names_the_list(engine, write_module):
    path = write_module("var_ops.py", VARIABLE_GRADS)
    res = _run(engine, path, "VarNone")
    assert res.status == "ok", res.error
    assert verdicts(res) == {"x": "match", "w": "broken", "out": "match"}
    w, x = res.tensor("w"), res.tensor("x")
    np.testing.assert_allclose(w.grads["default"], x.value.sum(axis=0), rtol=1e-6)
    assert "variables= list (None there gives none)" in w.absent["custom"]


def test_a_variables_list_of_the_wrong_length_is_gv101(engine, write_module):
    path = write_module("var_ops.py", VARIABLE_GRADS)
    res = _run(engine, path, "VarCount")
    assert res.status == "error" and "Must return gradient for each variable" in res.error.message
    [f] = [f for f in diagnose(res) if f.code == "GV101-grad-count"]
    assert "one gradient per entry of `variables`" in f.message
    assert f.where.startswith(path + ":")
