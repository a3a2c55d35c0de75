"""Issue 11 item 11: a TF custom_gradient `grad` returning a Python float, a numpy array or another
non-tensor is named ("grad returned float; return a tensor") at the user's `return` line."""

import numpy as np

from gradviz.model import RunRequest, RunSettings

SRC = """
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def returns_float(x):
    def grad(dy):
        return 1.0  # RETURN returns_float
    return tf.identity(x), grad


@tf.custom_gradient
def returns_numpy(x):
    def grad(dy):
        g = np.ones(200, np.float32)
        return g  # RETURN returns_numpy
    return x * 1.0, grad


@tf.custom_gradient
def second_is_a_list(x, y):
    def grad(dy):
        return dy * y, [1.0] * 200  # RETURN second_is_a_list
    return x * y, grad


def _helper(dy):
    return dy.numpy() * 3.0


@tf.custom_gradient
def via_helper(x):
    def grad(dy):
        return _helper(dy)  # RETURN via_helper (the grad's own return)
    return x * 3.0, grad


@tf.custom_gradient
def fine(x):
    def grad(dy):
        return dy * 3.0
    return x * 3.0, grad
"""


def _line(path, marker):
    with open(path) as fh:
        return next(i for i, text in enumerate(fh, 1) if marker in text)


def _run(engine, path, name):
    settings = RunSettings(modes=("default", "custom"))
    [res] = engine.run([RunRequest(path, name, "tf", settings)])
    return res


def test_non_tensor_grad_is_named_at_the_users_return(engine, write_module):
    path = write_module("tf_bad_grads.py", SRC)
    cases = {
        "returns_float": ("float", "returns_float"),
        "returns_numpy": ("ndarray", "returns_numpy"),
        "second_is_a_list": ("float", "second_is_a_list"),
        "via_helper": ("ndarray", "via_helper"),
    }
    for name, (type_name, marker) in cases.items():
        res = _run(engine, path, name)
        err = res.mode_errors.get("custom") or res.error
        assert err is not None, name
        assert err.message.startswith(f"grad returned {type_name}; return a tensor"), (name, err)
        assert "'numpy'" not in err.message
        assert err.where == f"{path}:{_line(path, 'RETURN ' + marker)}", (name, err.where)
        assert err.traceback and "RETURN " + marker in err.traceback


def test_tensor_grad_still_runs(engine, write_module):
    path = write_module("tf_fine_grad.py", SRC)
    res = _run(engine, path, "fine")
    assert res.status == "ok", res.error
    np.testing.assert_allclose(res.tensor("x").grads["custom"], 3.0 * np.ones(200))
    np.testing.assert_allclose(res.tensor("x").grads["default"], 3.0 * np.ones(200))
