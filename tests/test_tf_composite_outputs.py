"""An op returning a tf.RaggedTensor or tf.SparseTensor is a clear OpOutputError at the op (it
failed in gradviz with "int() argument must be ... not 'NoneType'"); a ragged tensor inside an
op with a dense output runs."""

import numpy as np

from tests.op_runs import run, verdicts

COMPOSITE = """
import tensorflow as tf
import keras
import gradviz


@gradviz.op(inputs={"x": (5,)})
@tf.custom_gradient
def ragged_out(x):
    r = tf.RaggedTensor.from_row_lengths(x, [2, 3])
    def grad(dy):
        return dy * 2.0
    return r * 2.0, grad


class SparseOut(keras.layers.Layer):
    def call(self, x):
        return tf.sparse.from_dense(x)


@gradviz.op(inputs={"x": (5,)})
@tf.custom_gradient
def ragged_inside(x):
    out = tf.reduce_sum(tf.RaggedTensor.from_row_lengths(x, [2, 3]), axis=1)
    def grad(dy):
        return tf.concat([tf.repeat(dy[0], 2), tf.repeat(dy[1], 3)], 0)
    return out, grad
"""


def _failed(engine, path, qualname):
    from gradviz.model import RunRequest, RunSettings

    [res] = engine.run([RunRequest(path, qualname, "tf", RunSettings(shape=(5,)))])
    assert res.status == "error"
    return res.error


def test_ragged_and_sparse_outputs_say_so_at_the_op(engine, write_module):
    path = write_module("composite_ops.py", COMPOSITE)
    err = _failed(engine, path, "ragged_out")
    assert err.type == "OpOutputError", err
    assert "tf.RaggedTensor" in err.message and "to_tensor()" in err.message
    assert err.where.endswith("composite_ops.py:9"), err.where  # its def line
    err = _failed(engine, path, "SparseOut")
    assert err.type == "OpOutputError" and "tf.sparse.to_dense" in err.message, err
    assert "NoneType" not in err.message


def test_ragged_inside_a_dense_op_runs(engine, write_module):
    path = write_module("composite_ops.py", COMPOSITE)
    res = run(engine, path, "ragged_inside", "tf")
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.ones(5))
    assert verdicts(res) == {"x": "match", "out": "match"}
