"""A layer's weight or an op's argument named as one of the graph's own tensors (the seed graph's
a, b, c): the two gradients shared one name and one overwrote the other, so a correct layer read
`differs` ("custom and numeric differ in shape"). A weight is shown as `self.NAME`; an argument
that clashes is a GraphMismatch saying so."""

import numpy as np

from tests.op_runs import run, verdicts

NAMED = """
import keras
import torch


class AB(keras.layers.Layer):
    def build(self, input_shape):
        n = input_shape[-1]
        self.a = self.add_weight(shape=(n,), initializer="zeros", name="a")
        self.b = self.add_weight(shape=(n,), initializer="ones", name="b")

    def call(self, x):
        return x * self.b + self.a


class TwoArgs(keras.layers.Layer):
    def call(self, a, b):
        return a * b


class ABTorch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.zeros(4))
        self.b = torch.nn.Parameter(torch.ones(4))

    def forward(self, x):
        return x * self.b + self.a
"""


def test_weights_named_as_the_seed_graphs_tensors_are_self_names(engine, write_module):
    from gradviz.model import RunSettings

    path = write_module("named_ops.py", NAMED)
    settings = RunSettings(graph="seed", shape=(3, 4))
    for qualname, fw in (("AB", "tf"), ("ABTorch", "torch")):
        res = run(engine, path, qualname, fw, settings)
        assert verdicts(res) == {
            "a": "match",
            "self.a": "match",
            "self.b": "match",
            "b": "match",
            "c": "match",
        }, (fw, verdicts(res))
        a, wa, wb = res.tensor("a"), res.tensor("self.a"), res.tensor("self.b")
        assert a.value.shape == (3, 4) and wa.value.shape == wb.value.shape == (4,)
        # loss = sum(23 * (a * self.b + self.a))
        for mode in ("custom", "default"):
            np.testing.assert_allclose(
                a.grads[mode], np.broadcast_to(23 * wb.value, (3, 4)), rtol=1e-6
            )
            np.testing.assert_allclose(wb.grads[mode], 23 * a.value.sum(axis=0), rtol=1e-5)
            np.testing.assert_allclose(wa.grads[mode], np.full(4, 69.0), rtol=1e-6)
        np.testing.assert_allclose(wb.grads["numeric"], 23 * a.value.sum(axis=0), rtol=1e-4)


def test_an_argument_named_as_a_graph_tensor_is_a_graph_mismatch(engine, write_module):
    from gradviz.model import RunRequest, RunSettings

    path = write_module("named_ops.py", NAMED)
    [res] = engine.run([RunRequest(path, "TwoArgs", "tf", RunSettings(graph="seed", shape=(3, 4)))])
    assert res.status == "error" and res.error.type == "GraphMismatch", res.error
    assert "names its own tensors a, b, c" in res.error.message and "(b)" in res.error.message
    res = run(engine, path, "TwoArgs", "tf", RunSettings(shape=(3, 4)))  # the op graph: fine
    assert verdicts(res) == {"a": "match", "b": "match", "out": "match"}
