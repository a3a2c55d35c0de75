"""One file's patch of framework internals cannot change another file's verdict (issue 26, item
5): a file that replaced `torch.Tensor.numpy` made every later gradient read as its patch said,
so another file's wrong backward read `match`. What gradviz reads gradients with is bound before
any user code runs and put back after each import of and call into a file; the file that
patched it is named in its own results. A worker of its own, so no other test shares the patch."""

import numpy as np
import pytest

from gradviz.model import RunRequest, RunSettings

PATCHER = """
import torch

_real = torch.Tensor.numpy
def _zeros(self, *args, **kwargs):              # every tensor read back as zeros
    return _real(torch.zeros_like(self), *args, **kwargs)
torch.Tensor.numpy = _zeros
torch.autograd.grad = lambda *a, **k: None

class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        return 2 * g
"""

WRONG = """
import torch

class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        return 3 * g                            # wrong: the derivative is 2
"""


@pytest.fixture(scope="module")
def torch_engine():
    from gradviz.engine import Engine

    with Engine(("torch",)) as eng:
        yield eng


def test_a_patch_of_tensor_numpy_reaches_no_other_file(torch_engine, write_module):
    from gradviz.app.analysis import analyze

    patcher, wrong = write_module("patcher.py", PATCHER), write_module("wrong.py", WRONG)
    settings = RunSettings(modes=("default", "custom", "numeric"))
    first = torch_engine.run_one(RunRequest(patcher, "Double", "torch", settings))
    second = torch_engine.run_one(RunRequest(wrong, "Double", "torch", settings))
    assert first.status == second.status == "ok", (first.error, second.error)
    x = second.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], np.full(200, 3.0, np.float32))
    np.testing.assert_array_equal(x.grads["default"], np.full(200, 2.0, np.float32))
    [verdict] = [
        t.verdict for t in analyze(second, curves=False).comparison.tensors if t.name == "x"
    ]
    assert verdict == "differs"
    # the patching file's own results are read without its patch, and it is named
    np.testing.assert_array_equal(first.tensor("x").grads["custom"], np.full(200, 2.0, np.float32))
    [note] = [w for w in first.warnings if "patches framework internals" in w]
    assert "torch.Tensor.numpy" in note and "torch.autograd.grad" in note
    assert not any("patches framework internals" in w for w in second.warnings)


TF_PATCHER = """
import tensorflow as tf

_real = tf.GradientTape.gradient
def _zeros(self, target, sources, *args, **kwargs):     # every gradient read as zeros
    got = _real(self, target, sources, *args, **kwargs)
    return tf.nest.map_structure(lambda g: None if g is None else tf.zeros_like(g), got)
tf.GradientTape.gradient = _zeros

@tf.custom_gradient
def double(x):
    def grad(g):
        return 2 * g
    return 2 * x, grad
"""

TF_WRONG = """
import tensorflow as tf

@tf.custom_gradient
def double(x):
    def grad(g):
        return 3 * g                                    # wrong: the derivative is 2
    return 2 * x, grad
"""


@pytest.fixture(scope="module")
def tf_engine():
    from gradviz.engine import Engine

    with Engine(("tf",)) as eng:
        yield eng


def test_a_patch_of_the_tape_reaches_no_other_file_in_tf(tf_engine, write_module):
    from gradviz.app.analysis import analyze

    patcher, wrong = (
        write_module("tf_patcher.py", TF_PATCHER),
        write_module("tf_wrong.py", TF_WRONG),
    )
    settings = RunSettings(modes=("default", "custom", "numeric"))
    first = tf_engine.run_one(RunRequest(patcher, "double", "tf", settings))
    second = tf_engine.run_one(RunRequest(wrong, "double", "tf", settings))
    assert first.status == second.status == "ok", (first.error, second.error)
    x = second.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], np.full(200, 3.0, np.float32))
    np.testing.assert_array_equal(x.grads["default"], np.full(200, 2.0, np.float32))
    [verdict] = [
        t.verdict for t in analyze(second, curves=False).comparison.tensors if t.name == "x"
    ]
    assert verdict == "differs"
    np.testing.assert_array_equal(first.tensor("x").grads["custom"], np.full(200, 2.0, np.float32))
    [note] = [w for w in first.warnings if "patches framework internals" in w]
    assert "GradientTape.gradient" in note
    assert not any("patches framework internals" in w for w in second.warnings)
