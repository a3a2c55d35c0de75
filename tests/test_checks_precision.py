"""The precision check tells the story the verdicts tell (real workers, both frameworks): a
surrogate is skipped, never "a bug in the backward"; a gradient of the wrong shape is skipped
with GV102 named, never a crash; elements where numeric is NaN/Inf are left out as the verdicts
leave them out. And a check whose own code raises is gradviz's failure (skip), not the user's."""

from pathlib import Path

import numpy as np
import pytest

from gradviz.backends import checks as checks_pkg
from gradviz.compare import compare_result
from gradviz.compare.metrics import close_mask, tolerances
from gradviz.diagnostics import diagnose
from gradviz.model import RunRequest, RunSettings

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"
PRECISION = RunSettings(checks=("precision",))


def run(engine, path, qualname, framework):
    [res] = engine.run([RunRequest(str(path), qualname, framework, PRECISION)])
    assert res.status == "ok", res.error
    [c] = res.checks
    return res, c


def codes(res):
    return {f.code for f in diagnose(res, compare_result(res))}


@pytest.mark.parametrize(
    "framework, path",
    [("torch", EXAMPLES / "tutorial_torch.py"), ("tf", EXAMPLES / "tutorial_tf.py")],
)
def test_the_built_in_straight_through_round_is_skipped_as_a_surrogate(engine, framework, path):
    res, c = run(engine, path, "RoundSTE" if framework == "torch" else "round_ste", framework)
    assert (c.status, c.kind) == ("skip", "")
    assert "x is a surrogate" in c.message and "only where numeric is 0" in c.message
    assert "bug" not in c.message
    assert "GV751-precision-bug" not in codes(res)
    x = res.tensor("x")
    assert np.all(x.grads["custom"] == 1.0) and np.all(x.grads["numeric"] == 0.0)


VERDICTS = Path(__file__).resolve().parent / "corpus" / "verdicts"


@pytest.mark.parametrize(
    "framework, path, qualname",
    [
        ("torch", VERDICTS / "classes_torch.py", "Reversal"),
        ("tf", VERDICTS / "classes_tf.py", "reversal"),
    ],
)
def test_a_gradient_reversal_is_skipped_not_called_a_precision_bug(
    engine, framework, path, qualname
):
    """-g for an identity: numeric times -1 at every element, in float64 too. Not rounding, and
    no bug either: GV302 calls it an intended reversal by its name; precision says nothing."""
    res, c = run(engine, path, qualname, framework)
    assert (c.status, c.kind) == ("skip", "")
    assert "x is -1 x numeric" in c.message and "gradient reversal, or a flipped sign" in c.message
    found = codes(res)
    assert "GV302-grad-surrogate" in found and "GV751-precision-bug" not in found
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], -np.ones(200))


TF_SHAPES = """\
    import tensorflow as tf


    @tf.custom_gradient
    def short_grad(x):
        def grad(dy):
            return dy[:5] * 2.0
        return x * 2.0, grad
    """


def test_a_gradient_of_the_wrong_shape_is_skipped_naming_gv102(engine, write_module):
    """TensorFlow passes a (5,) gradient of a (200,) input on unchecked; the precision check
    compared it element by element and raised a broadcast ValueError. The built-in trap's scalar
    gradient was called "a bug in the backward"."""
    path = write_module("shapes_tf.py", TF_SHAPES)
    for p, qualname, shape in [
        (path, "short_grad", "(5,)"),
        (EXAMPLES / "traps_tf.py", "wrong_grad_shape", "()"),
    ]:
        res, c = run(engine, p, qualname, "tf")
        assert c.status == "skip", c
        assert c.message.startswith(
            f"the gradient has the wrong shape (x has shape {shape} for "
            "a tensor of shape (200,)), see GV102"
        )
        found = codes(res)
        assert "GV102-grad-shape" in found and "GV751-precision-bug" not in found


SQRT_TORCH = """\
    import gradviz
    import torch

    X = [1e-7, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0]


    @gradviz.op(inputs={"x": X})
    class Sqrt(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sqrt(x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 0.5 / torch.sqrt(x + 1e-12)
    """

SQRT_TF = """\
    import gradviz
    import tensorflow as tf

    X = [1e-7, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0]


    @gradviz.op(inputs={"x": X})
    @tf.custom_gradient
    def sqrt(x):
        def grad(dy):
            return dy * 0.5 / tf.sqrt(x + 1e-12)
        return tf.sqrt(x), grad
    """


@pytest.mark.parametrize(
    "framework, source, qualname", [("torch", SQRT_TORCH, "Sqrt"), ("tf", SQRT_TF, "sqrt")]
)
def test_where_numeric_is_undefined_the_check_leaves_it_out_as_the_verdicts_do(
    engine, write_module, framework, source, qualname
):
    """At x = 1e-7 the central difference steps below 0: sqrt is NaN there and numeric has no
    value (the verdicts leave that element out). The check counted it as a disagreement, re-ran
    in float64 and quoted a difference below its own tolerance."""
    res, c = run(engine, write_module(f"sqrt_{framework}.py", source), qualname, framework)
    x = res.tensor("x")
    n = x.grads["numeric"]
    assert np.isnan(n[0]) and np.all(np.isfinite(n[1:]))
    assert close_mask(x.grads["custom"][1:], n[1:], tolerances("float32", numeric=True)).all()
    assert (c.status, c.message) == (
        "pass",
        "the float32 custom gradient agrees with numeric: nothing to re-run",
    )
    assert compare_result(res).tensors[0].verdict == "match"


class _Ctx:
    framework = "torch"

    def backward_where(self):
        return "ops.py:1"


def _fake_check(monkeypatch, check):
    module = type("FakeCheck", (), {"torch_check": staticmethod(check)})
    monkeypatch.setattr(checks_pkg.importlib, "import_module", lambda name: module)


def test_a_check_whose_own_code_raises_is_skipped_as_gradviz_s_failure(monkeypatch):
    """numpy raising for gradviz's own comparison (a broadcast error in compare.metrics) is
    gradviz's bug: skip, with the exception and where it came from, never a fail of the op."""
    _fake_check(
        monkeypatch, lambda ctx: close_mask(np.zeros(3), np.zeros(5), tolerances("float32"))
    )
    got = checks_pkg.run_one(_Ctx(), "precision")
    assert got.status == "skip" and got.where == "" and got.kind == ""
    assert got.message.startswith(
        "gradviz's own precision check failed (ValueError: operands could not be broadcast"
    )
    assert "gradviz/compare/metrics.py:" in got.message and "not a fault of the op" in got.message


def test_user_code_raising_inside_a_check_is_still_the_users_failure(monkeypatch, tmp_path):
    user = tmp_path / "user_op.py"
    user.write_text("def backward(g):\n    raise ValueError('backward refuses')\n")
    namespace = {}
    exec(compile(user.read_text(), str(user), "exec"), namespace)
    _fake_check(monkeypatch, lambda ctx: namespace["backward"](1.0))
    got = checks_pkg.run_one(_Ctx(), "precision")
    assert (got.status, got.kind, got.where) == ("fail", "raised", f"{user}:2")
    assert "raised ValueError: backward refuses" in got.message


def test_a_check_that_cannot_even_be_found_is_skipped_as_gradviz_s_failure():
    """importlib raising (through the standard library's frames) for gradviz's own lookup."""
    got = checks_pkg.run_one(_Ctx(), "no_such_check")
    assert got.status == "skip"
    assert got.message.startswith(
        "gradviz's own no_such_check check failed (ModuleNotFoundError: No module named"
    )


@pytest.mark.parametrize(
    "framework, qualname", [("torch", "LastElementMissed"), ("tf", "last_element_missed")]
)
def test_one_element_off_where_default_agrees_is_no_kink_and_fails(engine, framework, qualname):
    """x**2 with the last element's gradient left 0: one of 200 off numeric, within the kinks'
    1 in 100, but default agrees with numeric there. The check said "agrees with numeric:
    nothing to re-run" beside a differs verdict; it fails in float64 as the verdict does."""
    path = Path(__file__).resolve().parent / "corpus" / "verdicts" / f"classes_{framework}.py"
    res, c = run(engine, path, qualname, framework)
    assert compare_result(res).tensors[0].verdict == "differs"
    assert c.status == "fail" and "x: 1 of 200 elements differ" in c.message
    assert "not float32 rounding" in c.message
