"""Layer parameters are named by attribute path in both frameworks (DESIGN.md), so an unnamed
Keras weight is seeded and compared like its torch twin's `scale`."""

import numpy as np
from op_runs import run

from gradviz.compare import compare_result
from gradviz.diagnostics import diagnose
from gradviz.model import RunSettings

SEED = RunSettings(graph="seed")


def test_unnamed_keras_weights_take_their_attribute_names(engine, write_module):
    path = write_module(
        "scale_twins.py",
        """\
        import tensorflow as tf
        import torch
        from tensorflow import keras


        class Scale(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.scale = self.add_weight(shape=(200,), initializer="random_normal")
                self.inner = keras.layers.Dense(3)

            def call(self, x):
                return x * self.scale


        class ScaleTorch(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = torch.nn.Parameter(torch.randn(200))

            def forward(self, x):
                return x * self.scale
    """,
    )
    tf_res = run(engine, path, "Scale", "tf", SEED)
    torch_res = run(engine, path, "ScaleTorch", "torch", SEED)
    scale = tf_res.tensor("scale")
    assert scale is not None and scale.role == "param", [t.name for t in tf_res.tensors]
    np.testing.assert_array_equal(scale.value, torch_res.tensor("scale").value)
    a = tf_res.tensor("a")
    np.testing.assert_allclose(a.grads["custom"], 23 * scale.value, rtol=1e-6)
    np.testing.assert_allclose(a.grads["default"], 23 * scale.value, rtol=1e-6)
    np.testing.assert_allclose(scale.grads["custom"], 23 * a.value, rtol=1e-6)
    assert {t.name: t.verdict for t in compare_result(tf_res).tensors}["scale"] == "match"
    codes = {f.code for f in diagnose(tf_res, compare_result(tf_res))}
    assert "GV201-forward-changed" not in codes


def test_nested_layer_weights_are_dotted_paths(engine, write_module):
    path = write_module(
        "nested_dense.py",
        """\
        from tensorflow import keras


        class Block(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.dense = keras.layers.Dense(200)
                self.blocks = [keras.layers.Dense(200, use_bias=False)]

            def call(self, x):
                return self.blocks[0](self.dense(x[None, :]))[0]
    """,
    )
    res = run(engine, path, "Block", "tf", RunSettings(modes=("custom", "default")))
    names = {t.name for t in res.tensors if t.role == "param"}
    assert names == {"dense.kernel", "dense.bias", "blocks.0.kernel"}, names
