"""Contract checks on real TensorFlow runs: ops that fail each check that applies, confirmed by
TensorFlow itself (tf.function raising, a bfloat16 call raising), and ops that pass. The
confirmations run in a process of their own (corpus/checks/confirm_tf.py): the test process never
imports tensorflow."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradviz.compare import compare_result
from gradviz.compare.metrics import fmt
from gradviz.diagnostics import diagnose
from gradviz.model import CHECKS, RunRequest, RunSettings

OPS = Path(__file__).resolve().parent / "corpus" / "checks" / "tf_ops.py"
BATCH = (
    "square",
    "square_numpy",
    "square_stopped",
    "square_half_stopped",
    "square_f32const",
    "square_cancel",
    "square_wrong",
    "ScaleLayer",
    "DoubleLayer",
    "square_cancel_traced",
    "layer_norm",
    "layer_norm_bf16_slip",
    "clip_quantise",
)


@pytest.fixture(scope="module")
def runs(engine):
    reqs = [RunRequest(str(OPS), q, "tf", RunSettings(checks=CHECKS)) for q in BATCH]
    return {r.request.qualname: r for r in engine.run(reqs)}


@pytest.fixture(scope="module")
def tf_says():
    """What TensorFlow itself does with the corpus ops: what -> "ok" | "Error: message"."""
    proc = subprocess.run(
        [sys.executable, str(OPS.parent / "confirm_tf.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check(result, name):
    assert result.status == "ok", result.error
    return next(c for c in result.checks if c.name == name)


def line_of(text: str, start: str) -> str:
    lines = OPS.read_text().splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith(start))
    return f"{OPS}:{next(i for i in range(first, len(lines)) if text in lines[i]) + 1}"


def codes(result):
    return {f.code for f in diagnose(result, compare_result(result))}


def test_a_clean_custom_gradient_passes_and_strides_are_skipped(runs):
    statuses = {c.name: c for c in runs["square"].checks}
    assert [c.name for c in runs["square"].checks] == list(CHECKS)
    skip = statuses.pop("noncontiguous_upstream")
    assert skip.status == "skip" and "strides" in skip.message
    assert all(c.status == "pass" for c in statuses.values()), statuses
    assert "tf.function" in statuses["compiled"].message
    assert "vectorized_map" in statuses["vmap"].message


def test_numpy_in_the_gradient_fails_compiled_as_tf_function_does(runs, tf_says):
    res = runs["square_numpy"]
    c = check(res, "compiled")
    assert c.status == "fail" and "numpy" in c.message
    assert c.where == line_of("x.numpy()", "def square_numpy")
    assert ".numpy()" in c.fix
    assert check(res, "vmap").status == "fail"
    assert "GV741-compiled-raises" in codes(res)
    said = tf_says["tf.function square_numpy"]
    assert said.startswith("AttributeError") and "numpy" in said


def test_stop_gradient_in_the_gradient_is_a_silent_zero_second_derivative(runs, tf_says):
    c = check(runs["square_stopped"], "double_backward")
    assert c.status == "fail" and "not differentiable" in c.message
    assert "GV702-double-backward-cut" in codes(runs["square_stopped"])
    assert tf_says["second derivative square_stopped"] == "zero"  # the true one is 2
    assert check(runs["square"], "double_backward").status == "pass"


def _along(n: int = 200) -> float:
    """The double_backward check's first direction for one (n,) input, from its seeds: the
    second derivative of sum(v * g) along w through g = upstream * (x + stop_gradient(x)) is
    sum(v * upstream * w) (the true one twice that)."""
    w = np.random.default_rng(3).standard_normal(n)
    v = np.random.default_rng([11, 0]).standard_normal(n)
    up = np.random.default_rng([7, 0]).standard_normal(n)
    return float(np.sum(v * up * w))


def test_double_backward_speaks_tensorflow_not_torch(runs):
    """TF has no once_differentiable nor gradgradcheck: a cut or half-cut grad_fn is told in
    nested tf.GradientTape's words, the fix naming what cuts TF's graph."""
    cut = check(runs["square_stopped"], "double_backward")
    half = check(runs["square_half_stopped"], "double_backward")
    assert (cut.kind, half.kind) == ("not_differentiable", "wrong_second")
    assert f"direction is {2 * _along():.4g}" in cut.message  # what the true one would be
    assert (
        f"again gives {_along():.6g} along a random direction where its numeric derivative is {2 * _along():.6g}"
        in half.message
    )
    assert "a second-order check with nested tf.GradientTape would fail" in half.message
    for c in (cut, half):
        words = c.message + c.fix
        assert "once_differentiable" not in words and "gradgradcheck" not in words, c
        assert ".detach()" not in words and "no_grad" not in words
        assert "tf.stop_gradient" in c.fix and "nested tf.GradientTape" in c.fix
        assert "grad_fn" in c.fix
    np.testing.assert_allclose(
        runs["square_half_stopped"].tensor("x").grads["custom"],
        2.0 * runs["square_half_stopped"].tensor("x").value,
        rtol=1e-6,
    )
    assert "GV703-double-backward-wrong" in codes(runs["square_half_stopped"])


def test_a_float32_constant_in_the_gradient_breaks_under_bfloat16(runs, tf_says):
    c = check(runs["square_f32const"], "autocast")
    assert c.status == "fail" and "bfloat16" in c.message
    assert c.where == line_of("tf.constant(TWO)", "def square_f32const")
    assert "tf.cast" in c.fix
    assert "GV721-autocast-dtype-mix" in codes(runs["square_f32const"])
    said = tf_says["bfloat16 square_f32const"]
    assert said.startswith("InvalidArgumentError") and "bfloat16" in said


def test_a_layer_under_mixed_bfloat16_passes_and_the_policy_is_restored(runs, engine):
    c = check(runs["ScaleLayer"], "autocast")
    assert c.status == "pass" and "mixed_bfloat16" in c.message
    assert "outputs bfloat16" in c.message  # it really computed in bfloat16
    (after,) = engine.run(
        [RunRequest(str(OPS), "ScaleLayer", "tf", RunSettings(modes=("custom",)))]
    )
    assert after.status == "ok" and after.tensor("out").value.dtype == np.float32


def test_a_layer_mixing_dtypes_fails_under_mixed_bfloat16_as_keras_does(runs, tf_says):
    c = check(runs["DoubleLayer"], "autocast")
    assert c.status == "fail" and "mixed_bfloat16" in c.message
    assert c.where == line_of("return x * s, grad", "def scaled")
    assert "GV721-autocast-dtype-mix" in codes(runs["DoubleLayer"])
    assert tf_says["mixed_bfloat16 DoubleLayer"].startswith("InvalidArgumentError")


def test_bfloat16_is_judged_at_the_gradient_size_not_at_a_cancelled_one(runs):
    """Under upstream ones a layer norm's float32 gradient is rounding (~1e-7): bfloat16 missed
    it by 10^4 'relative L2' and failed a right op. Its size under a random upstream of the
    same norm is the scale: the right one passes, the one whose bfloat16 path drops the mean
    terms still fails (by about its whole size)."""
    assert check(runs["layer_norm"], "autocast").status == "pass"
    c = check(runs["layer_norm_bf16_slip"], "autocast")
    assert c.status == "fail" and "differs from float32 by" in c.message
    rel = float(c.message.split("differs from float32 by ")[1].split()[0])
    assert 0.5 < rel < 2.0
    assert "GV722-autocast-inaccurate" in codes(runs["layer_norm_bf16_slip"])


def test_bfloat16_flipping_a_gradient_at_a_clip_bound_is_a_kink(runs):
    """bfloat16 rounds one input just above the quantiser's bound 2 onto it, where the
    gradient steps from 0 to 1: relative L2 0.09 from that one element, as verdicts allow kinks
    (at most 1 in 100)."""
    c = check(runs["clip_quantise"], "autocast")
    assert c.status == "pass", c.message
    assert "GV722-autocast-inaccurate" not in codes(runs["clip_quantise"])


def test_precision_tells_rounding_from_a_bug(runs):
    c = check(runs["square_cancel"], "precision")
    assert c.status == "pass" and "rounding" in c.message
    assert c.tensors == ("x",)  # cleared as rounding: no finding may call x a bug
    w = check(runs["square_wrong"], "precision")
    assert w.status == "fail" and w.where == line_of("def grad", "def square_wrong")
    assert "GV751-precision-bug" in codes(runs["square_wrong"])
    assert "GV301-grad-wrong" not in codes(runs["square_cancel"])  # rounding: no "a bug"
    assert "GV301-grad-wrong" in codes(runs["square_wrong"])
    # 2.01 x for 2 x: 0.01 |x| in float64, against the tolerance it quotes (1e-6 x peak 2 max|x|)
    peak = float(np.max(np.abs(runs["square_wrong"].tensor("x").value)))
    assert (
        f"max abs difference {fmt(0.01 * peak)} (tolerance {fmt(1e-6 * 2 * peak)} abs + "
        "1e-05 rel)" in w.message
    ), w.message


def findings(result):
    return {f.code: f for f in diagnose(result, compare_result(result))}


def test_compiled_and_vmap_tell_the_ops_own_rounding_from_a_traced_bug(runs):
    """square_cancel rounds x to float32's spacing at 1e5 (2**-7) in eager mode; tf.function and
    vectorized_map fold (x + 1e5) - 1e5 away, so the two float32 gradients differ by 0.0078.
    float64 shows no difference: rounding, a pass. square_cancel_traced rounds as much and
    returns 2.02 x when traced: float64 differs too, 0.02 max|x|, and that stays a failure."""
    cancel, traced = runs["square_cancel"], runs["square_cancel_traced"]
    assert check(cancel, "precision").tensors == ("x",)  # cleared as rounding
    assert check(traced, "precision").tensors == ("x",)  # eager mode rounds only
    for name in ("compiled", "vmap"):
        c = check(cancel, name)
        assert c.status == "pass" and "float64 does not show: float32 rounding" in c.message
        assert "max abs difference 0.00779 at 5 of 200 elements" in c.message, c.message
        t = check(traced, name)
        peak = float(np.max(np.abs(traced.tensor("x").value)))
        assert t.status == "fail" and t.kind == "differs"
        assert (
            f"; in float64 too: max abs difference {fmt(0.02 * peak)} at 200 of 200 "
            "elements (rtol 1e-05, atol 1e-06), so it is not float32 rounding" in t.message
        ), t.message
    found = findings(cancel)
    assert "GV742-compiled-differs" not in found and "GV734-vmap-differs" not in found
    bad = findings(traced)
    assert bad["GV742-compiled-differs"].severity == "error"
    assert bad["GV734-vmap-differs"].severity == "error"


def test_bfloat16_rounding_of_a_formula_cleared_as_rounding_is_a_warning(runs):
    """In bfloat16 ((x + 1e5) - 1e5) keeps nothing of x: autocast still fails (the gradient is
    that far off under mixed precision), but the precision check found the formula right, so
    GV722 is a warning that says why, with a fix that keeps the op in float32."""
    c = check(runs["square_cancel"], "autocast")
    assert (
        c.status == "fail"
        and "differs from float32 by 0.987 (relative L2, its worst 2 of 200" in c.message
    )
    f = findings(runs["square_cancel"])["GV722-autocast-inaccurate"]
    assert f.severity == "warning" and "formula is right" in f.message
    assert "float32" in f.fix and "(x + c) - c" in f.fix
