"""Contract checks on real JAX runs (the session's JAX worker): a rule that fails each check that
applies fails it with its GV7xx finding at the rule's line, the numbers exact where the math
gives them; right rules (straight-through, reversal, a custom_jvp, Modules) fail none; strides
and autocast skip, saying JAX has neither."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradviz.compare import compare_result
from gradviz.compare.metrics import fmt
from gradviz.diagnostics import diagnose
from gradviz.model import CHECKS, RunRequest, RunSettings
from gradviz.vocab import Framework

pytestmark = pytest.mark.skipif(not Framework.JAX.installed, reason="jax is not installed")

HERE = Path(__file__).resolve().parent
OPS = HERE / "corpus" / "checks" / "jax_ops.py"
RULES = HERE / "corpus" / "jax" / "rules_jax.py"
ALL = RunSettings(checks=CHECKS)
BATCH = (
    "square",
    "square_numpy",
    "square_stopped",
    "square_half_stopped",
    "square_warmup",
    "softmax_host",
    "wave_bf16",
    "square_cancel",
    "square_wrong",
    "StoppedScaled",
)


@pytest.fixture(scope="module")
def runs(engine):
    reqs = [RunRequest(str(OPS), q, "jax", ALL) for q in BATCH]
    return {r.request.qualname: r for r in engine.run(reqs)}


def check(result, name):
    assert result.status == "ok", result.error
    return next(c for c in result.checks if c.name == name)


def line_of(text: str, start: str, path: Path = OPS) -> str:
    lines = path.read_text().splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith(start))
    return f"{path}:{next(i for i in range(first, len(lines)) if text in lines[i]) + 1}"


def codes(result):
    return {f.code for f in diagnose(result, compare_result(result))}


def _x(res):
    return np.asarray(res.tensor("x").value, dtype=np.float64)


def _custom(res):
    return np.asarray(res.tensor("x").grads["custom"], dtype=np.float64)


def _along(n: int = 200, scale=1.0) -> float:
    """The double_backward check's first direction for one (n,) input, from its seeds: the exact
    second derivative of sum(v * g) along w, where g = 2 x * scale * upstream (the gradient of
    x * x * scale), is sum(v * 2 scale upstream * w)."""
    w = np.random.default_rng(3).standard_normal(n)
    v = np.random.default_rng([11, 0]).standard_normal(n)
    up = np.random.default_rng([7, 0]).standard_normal(n)
    return float(np.sum(v * 2.0 * scale * up * w))


def test_a_right_rule_passes_and_strides_and_autocast_skip_saying_jax_has_neither(runs):
    res = runs["square"]
    assert [c.name for c in res.checks] == list(CHECKS)
    by = {c.name: c for c in res.checks}
    strides, autocast = by.pop("noncontiguous_upstream"), by.pop("autocast")
    assert strides.status == "skip" and "JAX arrays have no strides" in strides.message
    assert autocast.status == "skip" and "JAX has no autocast" in autocast.message
    assert all(c.status == "pass" for c in by.values()), by
    assert (
        "jax.jit" in by["compiled"].message and "two calls of one trace" in by["compiled"].message
    )
    assert "jax.vmap" in by["vmap"].message and "jax.jacrev" in by["vmap"].message
    assert "default's double backward" in by["double_backward"].message
    np.testing.assert_allclose(_custom(res), 2.0 * _x(res), rtol=1e-6)
    assert not any(code.startswith("GV7") for code in codes(res))


def test_numpy_in_the_rule_runs_eagerly_and_fails_every_transform_at_its_line(runs):
    res = runs["square_numpy"]
    np.testing.assert_allclose(_custom(res), 2.0 * _x(res), rtol=1e-6)  # eager: right
    at = line_of("np.asarray(x)", "def _numpy_bwd")
    for name, kind in (
        ("compiled", "raised"),
        ("vmap", "data_dependent"),
        ("double_backward", "raised"),
    ):
        c = check(res, name)
        assert (c.status, c.kind, c.where) == ("fail", kind, at), c
        assert "TracerArrayConversionError" in c.message and "\n" not in c.message
        assert "BatchTracer" not in c.message  # JAX's first line only, not its tracer story
    assert check(res, "compiled").message.startswith("jax.jit(jax.grad(op)) raised")
    assert "numpy" in check(res, "vmap").fix
    found = codes(res)
    assert {"GV741-compiled-raises", "GV733-vmap-data-dependent"} <= found
    assert "GV704-double-backward-raises" in found
    assert check(res, "precision").status == "pass"


def test_stop_gradient_in_the_rule_is_a_silent_zero_second_derivative(runs):
    c = check(runs["square_stopped"], "double_backward")
    assert (c.status, c.kind) == ("fail", "not_differentiable")
    assert c.where == line_of("def _stopped_bwd", "def _stopped_bwd")
    assert f"along a random direction is {_along():.4g}," in c.message
    assert "once_differentiable" not in c.message + c.fix  # torch's word, not JAX's
    assert "stop_gradient" in c.fix
    assert "GV702-double-backward-cut" in codes(runs["square_stopped"])
    others = [x for x in runs["square_stopped"].checks if x.name != "double_backward"]
    assert all(x.status in ("pass", "skip") for x in others)
    # a Module around the rule: the finding points at the rule's bwd, not at the class
    m = check(runs["StoppedScaled"], "double_backward")
    assert (m.status, m.kind, m.where) == ("fail", "not_differentiable", c.where)
    scale = np.asarray(runs["StoppedScaled"].tensor("scale").value, dtype=np.float64)
    assert f"along a random direction is {_along(scale=scale):.4g}," in m.message


def test_a_half_stopped_rule_is_right_at_first_order_and_wrong_at_second(runs):
    res = runs["square_half_stopped"]
    np.testing.assert_allclose(_custom(res), 2.0 * _x(res), rtol=1e-6)
    c = check(res, "double_backward")
    assert (c.status, c.kind) == ("fail", "wrong_second")
    # (x + stop_gradient(x)) g: half the true second derivative, exactly
    assert f"gives {_along() / 2:.6g} along a random direction" in c.message
    assert f"numeric derivative is {_along():.6g}" in c.message
    assert "jax.test_util.check_grads(order=2)" in c.message
    assert "GV703-double-backward-wrong" in codes(res)


def test_a_host_callback_that_sums_over_the_batch_fails_vmap(runs):
    res = runs["softmax_host"]
    c = check(res, "vmap")
    assert (c.status, c.kind) == ("fail", "differs")
    assert c.where == line_of("def _softmax_host_bwd", "def _softmax_host_bwd")
    # upstream ones: alone y (1 - sum y) = 0; batched, the host sum runs over all 3 samples,
    # y (1 - 3) = -2 y for sample 0
    y = np.asarray(res.tensor("out").value, dtype=np.float64)
    assert "(sample 0) differs from the sample run alone" in c.message
    assert f"max abs difference {fmt(2.0 * y.max())} at" in c.message
    assert "in float64 too" in c.message and "not float32 rounding" in c.message
    assert "GV734-vmap-differs" in codes(res)
    assert check(res, "compiled").status == "pass"
    db = check(res, "double_backward")  # a host callback has no derivative: JAX says so
    assert db.kind == "raised" and "Pure callbacks do not support JVP" in db.message


def test_python_state_in_the_rule_is_frozen_by_jit(runs):
    res = runs["square_warmup"]
    c = check(res, "compiled")
    assert (c.status, c.kind) == ("fail", "differs")
    assert c.message.startswith("jax.jit gives another gradient for x than eager")
    assert "in float64 too" in c.message
    assert c.where == line_of("def _warmup_bwd", "def _warmup_bwd")
    assert "GV742-compiled-differs" in codes(res)
    # the gradient is 2 x times steps / 1000: a whole number of steps
    steps = 1000.0 * _custom(res) / (2.0 * _x(res))
    assert np.allclose(steps, np.round(steps[0]), rtol=1e-5) and steps[0] >= 1
    db = check(res, "double_backward")
    assert db.status == "skip" and "other gradients at the same point" in db.message


def test_precision_tells_float32_rounding_from_a_wrong_or_low_precision_rule(runs):
    cancel = check(runs["square_cancel"], "precision")
    assert cancel.status == "pass" and "rounding" in cancel.message and cancel.tensors == ("x",)
    assert "float32 rounding" in check(runs["square_cancel"], "compiled").message
    assert "GV751-precision-bug" not in codes(runs["square_cancel"])
    wrong = runs["square_wrong"]
    w = check(wrong, "precision")
    assert (w.status, w.kind, w.tensors) == ("fail", "stays", ("x",))
    assert w.where == line_of("square_wrong.defvjp", "square_wrong.defvjp")
    peak = float(np.max(np.abs(_x(wrong))))  # 2.01 x for 2 x: 0.01 |x| at the largest |x|
    assert f"max abs difference {fmt(0.01 * peak)} (tolerance {fmt(2e-6 * peak)} abs" in w.message
    assert "GV751-precision-bug" in codes(wrong)
    low = runs["wave_bf16"]
    bits = np.asarray(low.tensor("x").grads["custom"], dtype=np.float32).view(np.uint32)
    assert np.all(bits & 0xFFFF == 0)  # every value a bfloat16 number
    p = check(low, "precision")
    assert (p.status, p.kind) == ("fail", "stays") and "not float32 rounding" in p.message
    assert "GV751-precision-bug" in codes(low)
    db = check(low, "double_backward")  # steps of bfloat16, no slope: not compared
    assert db.status == "skip" and "bfloat16" in db.message


@pytest.mark.parametrize("qualname", ["round_ste", "grad_reverse", "log1pexp", "nested_jit"])
def test_right_rules_fail_no_check(engine, qualname):
    [res] = engine.run([RunRequest(str(RULES), qualname, "jax", ALL)])
    by = {c.name: c for c in res.checks}
    assert [c.name for c in res.checks] == list(CHECKS)
    assert not [c for c in res.checks if c.status == "fail"], by
    for name in ("double_backward", "vmap", "compiled"):
        assert by[name].status == "pass", by[name]
    if qualname == "log1pexp":
        assert by["precision"].status == "pass"
    elif qualname == "grad_reverse":
        assert by["precision"].status == "skip" and "x is -1 x numeric" in by["precision"].message
        assert "GV302-grad-surrogate" in codes(res) and "GV751-precision-bug" not in codes(res)
    else:  # straight-through: a surrogate numeric does not judge
        assert by["precision"].status == "skip" and "surrogate" in by["precision"].message


def test_modules_pass_their_checks(engine):
    path = HERE / "corpus" / "jax" / "modules_jax.py"
    reqs = [
        RunRequest(str(path), q, "jax", RunSettings(checks=("double_backward", "vmap", "compiled")))
        for q in ("NnxScaled", "LinenScaled", "EqxScaled")
    ]
    for res in engine.run(reqs):
        assert [(c.name, c.status) for c in res.checks] == [
            ("double_backward", "pass"),
            ("vmap", "pass"),
            ("compiled", "pass"),
        ], res.checks


def test_the_command_line_prints_and_writes_the_jax_checks(tmp_path):
    out = tmp_path / "r.json"
    root = HERE.parent
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", str(OPS), "--framework", "jax"]
        + ["--op", "square", "--op", "square_stopped", "--checks", "all"]
        + ["--json", str(out), "--strict", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(root)),
        cwd=root,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]  # square_stopped fails double_backward
    assert (
        "square (jax): double_backward pass, noncontiguous_upstream skip, autocast skip, "
        "vmap pass, compiled pass, precision pass" in proc.stdout
    )
    assert "square_stopped (jax): double_backward FAIL" in proc.stdout
    assert "GV702-double-backward-cut" in proc.stdout
    ops = {o["name"]: o for o in json.loads(out.read_text())["ops"]}
    stopped = ops["square_stopped"]["checks"][0]
    assert stopped["status"] == "fail"
    assert stopped["where"] == line_of("def _stopped_bwd", "def _stopped_bwd")
    assert [d["code"] for d in ops["square_stopped"]["diagnostics"]] == [
        "GV702-double-backward-cut"
    ]


def test_the_window_s_checks_tab_shows_the_jax_checks(qtbot, make_window):
    from gui_helpers import RUN_TIMEOUT_MS

    window = make_window([str(OPS)], {"run/modes": "default,custom"})
    panel = window.settings_panel
    for name in ("double_backward", "autocast"):
        panel.checks[name].setChecked(True)
    keys = [("jax", str(OPS), q) for q in ("square", "square_stopped")]
    with qtbot.waitSignal(window.runDone, timeout=RUN_TIMEOUT_MS):
        assert window.run(keys)
    m = window.checks_matrix
    assert m.cell_text(keys[0], "double_backward") == "✓ pass"
    assert m.cell_text(keys[1], "double_backward") == "✗ fail"
    assert m.cell_text(keys[1], "autocast").endswith("skip")
    assert window.tabs.tabText(window.tabs.indexOf(m)) == "Checks (1 failed)"
    m.choose(keys[1], "double_backward")
    text = m.detail.text()
    assert "stop_gradient" in text and "fix:" in text
    assert line_of("def _stopped_bwd", "def _stopped_bwd").rpartition("/")[2] in text


RANDOM = HERE / "corpus" / "jax" / "random_rules_jax.py"


def test_a_rule_drawing_from_numpy_or_python_is_random_and_its_checks_skip_saying_so(engine):
    """numpy's and Python's generators draw anew at every call of bwd: each check would compare
    two draws, so all are skipped up front with the reason, as for torch and TF. A rule drawing
    with a jax.random key it gets the same way at every call is no random backward."""
    names = ("coin_ste_numpy", "noisy_python", "coin_ste_key", "coin_ste_seeded")
    runs = {
        r.request.qualname: r
        for r in engine.run([RunRequest(str(RANDOM), q, "jax", ALL) for q in names])
    }
    for q in ("coin_ste_numpy", "noisy_python"):
        res = runs[q]
        assert res.status == "ok", res.error
        assert [c.name for c in res.checks] == list(CHECKS)
        for c in res.checks:
            assert c.status == "skip" and c.message.startswith("the custom backward is random"), c
        assert not [f for f in diagnose(res) if f.severity == "error"], q
    # the seeded draw of each mode: custom and default see one stream, so the plain run's
    # gradient of the noisy rule is (2 + u) * 2 for one u in [0, 1) at every element
    g = _custom(runs["noisy_python"])
    assert np.ptp(g) == 0 and 2.0 <= g[0] < 3.0
    for q in ("coin_ste_key", "coin_ste_seeded"):
        res = runs[q]
        assert res.status == "ok", res.error
        assert not [c for c in res.checks if "backward is random" in c.message], q
        by = {c.name: c for c in res.checks}
        assert {by[n].status for n in ("compiled", "vmap", "double_backward")} == {"pass"}, by
        custom = _custom(res)  # the key's mask: 0 or 2 times upstream ones
        assert set(np.unique(custom)) == {0.0, 2.0}
