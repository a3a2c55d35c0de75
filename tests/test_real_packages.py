"""Custom gradients shipped by real packages from the index (the `thirdparty` test extra and
.ci/run install them, pinned): gradients against closed forms, and the verdicts.

pytorch-revgrad: gradient reversal (a Function applied through an alias in another module).
magic-clamp: a clamp with a conditional straight-through backward (torch).
larq (Keras 2 through tf_keras): a binarised dense layer, ste_sign on inputs and kernel.
entmax: sparsemax and 1.5-entmax, classmethod Functions whose outputs sum to 1.
torchdiffeq: an ODE solved by the adjoint method (no default path, an exact custom gradient).
"""

import importlib.util
import os

import numpy as np
import pytest
from op_runs import run, verdicts

from gradviz.compare import compare_result
from gradviz.model import RunSettings


def test_pytorch_revgrad_reverses_and_default_does_not(engine, write_module):
    pytest.importorskip("pytorch_revgrad")
    path = write_module(
        "revgrad_ops.py",
        """\
        import gradviz
        from pytorch_revgrad import RevGrad

        gradviz.op(name="revgrad")(RevGrad)
    """,
    )
    res = run(engine, path, "RevGrad", "torch")
    x = res.tensor("input_")
    np.testing.assert_array_equal(x.grads["custom"], -np.ones(200))
    np.testing.assert_array_equal(x.grads["default"], np.ones(200))
    np.testing.assert_allclose(x.grads["numeric"], np.ones(200), atol=1e-4)
    np.testing.assert_array_equal(res.outputs["custom"], x.value)  # identity forward
    assert verdicts(res)["input_"] == "differs"


def test_entmax_sparsemax_closed_form_and_the_ones_upstream_warning(engine, write_module):
    pytest.importorskip("entmax")
    from gradviz.app.analysis import analyze

    path = write_module(
        "entmax_ops.py",
        """\
        from entmax.activations import Entmax15Function, SparsemaxFunction
    """,
    )
    res = run(engine, path, "SparsemaxFunction", "torch", RunSettings(upstream="random"))
    x, p = res.tensor("X"), res.outputs["custom"].astype(np.float64)
    g = res.tensor("out").grads["custom"].astype(np.float64)
    support = p > 0
    assert 0 < support.sum() < p.size and p.sum() == pytest.approx(1.0, abs=1e-5)
    # sparsemax's Jacobian-vector product: on the support, g minus its mean there; 0 off it
    np.testing.assert_allclose(
        x.grads["custom"], np.where(support, g - g[support].mean(), 0.0), atol=1e-6
    )
    assert verdicts(res) == {"X": "match", "out": "match"}
    assert (
        verdicts(run(engine, path, "Entmax15Function", "torch", RunSettings(upstream="random")))[
            "X"
        ]
        == "match"
    )
    ones = run(engine, path, "SparsemaxFunction", "torch")
    codes = {f.code for f in analyze(ones).findings}
    # outputs sum to 1: every gradient is 0 under ones; the upstream probe checked it under a
    # random upstream, so this is a match that says something (no GV304)
    assert verdicts(ones)["X"] == "match" and ones.tensor("X").probe["allclose"]
    assert "GV304-upstream-blind" not in codes
    assert "GV604-save-for-backward" not in codes  # `ctx.dim = dim` stores an int, no tensor


def test_torchdiffeq_adjoint_is_a_match_though_default_has_no_path(engine, write_module):
    """The adjoint method (torchdiffeq.odeint_adjoint) solves the ODE under no_grad and gets the
    gradient from a second, backward solve: default has no path, custom is exact (issue 24,
    class 1: it read `surrogate` when custom was judged against default first)."""
    pytest.importorskip("torchdiffeq")
    path = write_module(
        "adjoint_ops.py",
        """\
        import torch
        from torchdiffeq import odeint_adjoint


        class Decay(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rate = torch.nn.Parameter(torch.tensor(0.7))

            def forward(self, t, y):
                return -self.rate * y


        class AdjointDecay(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.func = Decay()

            def forward(self, y0):
                t = torch.tensor([0.0, 1.0], dtype=y0.dtype)
                return odeint_adjoint(self.func, y0, t, rtol=1e-7, atol=1e-9)[-1]
    """,
    )
    res = run(engine, path, "AdjointDecay", "torch")
    y0, rate = res.tensor("y0"), res.tensor("func.rate")
    k, v = float(rate.value), y0.value.astype(np.float64)
    # y(1) = y0 exp(-k): d/dy0 = exp(-k), d/dk = -sum(y0 exp(-k)) under upstream ones
    np.testing.assert_allclose(y0.grads["custom"], np.full(v.shape, np.exp(-k)), rtol=1e-5)
    np.testing.assert_allclose(rate.grads["custom"], -np.sum(v) * np.exp(-k), rtol=1e-4, atol=1e-5)
    assert "default" not in y0.grads and "default" not in rate.grads
    got = {t.name: t for t in compare_result(res).tensors}
    assert {n: t.verdict for n, t in got.items()} == {
        "y0": "match",
        "func.rate": "match",
        "out": "match",
    }
    assert "default gives no gradient" in got["y0"].explanation
    assert "unreliable here" in got["y0"].explanation


def test_magic_clamp_conditional_ste_closed_form(engine, write_module):
    pytest.importorskip("magic_clamp")
    path = write_module(
        "magic_ops.py",
        """\
        import torch
        from magic_clamp import magic_hardtanh


        class MagicHardTanh(torch.nn.Module):
            def forward(self, x):
                return magic_hardtanh(x, preserve_norm=False)
    """,
    )
    res = run(engine, path, "MagicHardTanh", "torch", RunSettings(upstream="random"))
    x, g = res.tensor("x"), res.tensor("out").grads["custom"]
    v = x.value.astype(np.float64)
    # the conditional STE: the upstream passes, except where it would push a clamped value
    # further out (below -1 with g > 0, above 1 with g < 0)
    blocked = ((v < -1) & (g > 0)) | ((v > 1) & (g < 0))
    np.testing.assert_allclose(x.grads["custom"], np.where(blocked, 0.0, g), rtol=1e-6)
    np.testing.assert_allclose(x.grads["default"], g * (np.abs(v) < 1), rtol=1e-6)
    np.testing.assert_allclose(x.grads["numeric"], g * (np.abs(v) < 1), atol=1e-3)
    assert verdicts(res)["x"] == "surrogate"  # differs only where clamp's gradient is 0


LARQ_OPS = """\
    import gradviz
    import larq as lq


    @gradviz.op(inputs={"inputs": (3, 8)})
    class BinaryDense(lq.layers.QuantDense):
        def __init__(self):
            super().__init__(4, input_quantizer="ste_sign", kernel_quantizer="ste_sign",
                             kernel_constraint=None, use_bias=False)
"""


@pytest.fixture(scope="module")
def keras2_engine():
    """Keras 2 is chosen before TensorFlow is imported (TF_USE_LEGACY_KERAS=1), as its users do:
    a worker of its own."""
    # found, not imported: larq imports only under Keras 2, which this process does not use
    for name in ("tf_keras", "larq"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (.ci/run installs it)")
    from gradviz.engine import Engine

    old = os.environ.get("TF_USE_LEGACY_KERAS")
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    try:
        eng = Engine(["tf"])
        eng.workers["tf"].wait_ready(120)
    finally:
        if old is None:
            del os.environ["TF_USE_LEGACY_KERAS"]
        else:
            os.environ["TF_USE_LEGACY_KERAS"] = old
    yield eng
    eng.close()


def test_larq_keras2_binary_dense_closed_form(keras2_engine, write_module):
    path = write_module("larq_ops.py", LARQ_OPS)
    [cat] = keras2_engine.load([path])
    assert cat.error is None, cat.error
    assert [op.qualname for op in cat.ops if op.kind == "layer"] == ["BinaryDense"]
    res = run(keras2_engine, path, "BinaryDense", "tf")
    x, k = res.tensor("inputs"), res.tensor("kernel")
    assert k is not None and k.role == "param", [t.name for t in res.tensors]
    xv, kv = x.value.astype(np.float64), k.value.astype(np.float64)
    up = np.ones((3, 4))
    sx, sk = np.where(xv >= 0, 1.0, -1.0), np.where(kv >= 0, 1.0, -1.0)
    np.testing.assert_allclose(res.outputs["custom"], sx @ sk, rtol=1e-6)
    # ste_sign: the identity gradient where |v| <= 1, zero outside
    np.testing.assert_allclose(x.grads["custom"], (up @ sk.T) * (np.abs(xv) <= 1), rtol=1e-6)
    np.testing.assert_allclose(k.grads["custom"], (sx.T @ up) * (np.abs(kv) <= 1), rtol=1e-6)
    # TensorFlow's own gradient of sign is zero
    np.testing.assert_array_equal(x.grads["default"], np.zeros((3, 8)))
    assert verdicts(res)["inputs"] == "surrogate"
