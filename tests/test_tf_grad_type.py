"""A TF gradient function that returns a Python float or a numpy array (issue 11, item 11):
TensorFlow hands it on as it is; gradviz says what it returned at the user's `return` line."""

from gradviz.model import RunRequest, RunSettings

SOURCE = """
import numpy as np
import tensorflow as tf

@tf.custom_gradient
def float_grad(x):
    def grad(dy):
        return 2.0
    return x * 2.0, grad

@tf.custom_gradient
def array_grad(x):
    y = x * 2.0
    def grad(dy):
        g = np.full(x.shape, 2.0)
        return g
    return y, grad
"""


def test_non_tensor_gradient_named_at_the_users_return(engine, write_module):
    path = write_module("non_tensor_grads_tf.py", SOURCE)
    settings = RunSettings(shape=(5,), modes=("default", "custom"))
    floaty, arrayish = engine.run(
        [RunRequest(path, q, "tf", settings) for q in ("float_grad", "array_grad")]
    )
    for res, kind, line in ((floaty, "float", 8), (arrayish, "ndarray", 16)):
        err = res.mode_errors["custom"]
        assert err.type == "GradReturnedNonTensor", err
        assert err.message.startswith(f"grad returned {kind}; return a tensor"), err.message
        assert err.where == f"{path}:{line}", err.where
        x = res.tensor("x")
        assert "custom" not in x.grads  # never a verdict on it
        assert list(x.grads["default"]) == [2.0] * 5  # the default still runs
