"""Contract checks on real torch runs: ops that fail each check, confirmed by torch's own tool,
and ops that pass. One batch of runs for the module; torch.compile only on two small ops. The
confirmations run in a process of their own (corpus/checks/confirm_torch.py): the test process
never imports torch."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradviz.compare import compare_result
from gradviz.compare.metrics import fmt
from gradviz.diagnostics import diagnose
from gradviz.model import CHECK_STATUSES, CHECKS, RunRequest, RunSettings

OPS = Path(__file__).resolve().parent / "corpus" / "checks" / "torch_ops.py"
WITHOUT_COMPILE = tuple(c for c in CHECKS if c != "compiled")
BATCH = (
    "Cube",
    "CubeOnce",
    "CubeDetached",
    "ViewBack",
    "InplaceBack",
    "OldStyle",
    "NoVmapRule",
    "LinearMixed",
    "LinearAmp",
    "SquareCancel",
    "SquareWrong",
    "CountingVmap",
)


@pytest.fixture(scope="module")
def runs(engine):
    reqs = [RunRequest(str(OPS), q, "torch", RunSettings(checks=WITHOUT_COMPILE)) for q in BATCH]
    return {r.request.qualname: r for r in engine.run(reqs)}


@pytest.fixture(scope="module")
def torch_says():
    """What torch's own tools do with the corpus ops: what -> "ok" | "Error: message"."""
    proc = subprocess.run(
        [sys.executable, str(OPS.parent / "confirm_torch.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check(result, name):
    assert result.status == "ok", result.error
    return next(c for c in result.checks if c.name == name)


def line_of(text: str, qualname: str) -> str:
    """file:line of the first line containing `text` inside class `qualname`."""
    lines = OPS.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"class {qualname}("))
    return f"{OPS}:{next(i for i in range(start, len(lines)) if text in lines[i]) + 1}"


def codes(result):
    return {f.code for f in diagnose(result, compare_result(result))}


def test_checks_run_in_contract_order_with_a_status_each(runs):
    for res in runs.values():
        assert [c.name for c in res.checks] == list(WITHOUT_COMPILE)
        assert all(c.status in CHECK_STATUSES and c.message for c in res.checks)
        assert all(c.where for c in res.checks if c.status == "fail")


def test_a_clean_function_passes_every_check(runs):
    statuses = {c.name: (c.status, c.message) for c in runs["Cube"].checks}
    assert all(s == "pass" for s, _ in statuses.values()), statuses
    assert "rounding" not in statuses["precision"][1]


def test_once_differentiable_fails_double_backward_as_gradgradcheck_does(runs, torch_says):
    c = check(runs["CubeOnce"], "double_backward")
    assert c.status == "fail" and "once_differentiable" in c.message
    assert c.where == line_of("def backward", "CubeOnce")
    assert "GV701-double-backward-once" in codes(runs["CubeOnce"])
    assert torch_says["gradgradcheck CubeOnce"].startswith("GradcheckError")
    assert "once_differentiable" in torch_says["double backward CubeOnce"]


def test_a_detached_backward_is_a_silent_zero_that_gradgradcheck_rejects(runs, torch_says):
    c = check(runs["CubeDetached"], "double_backward")
    assert c.status == "fail" and "not differentiable" in c.message
    assert "once_differentiable" in c.fix and ".detach()" in c.fix
    assert "GV702-double-backward-cut" in codes(runs["CubeDetached"])
    assert torch_says["gradgradcheck CubeDetached"].startswith("GradcheckError")
    assert check(runs["Cube"], "double_backward").status == "pass"
    assert torch_says["gradgradcheck Cube"] == "ok"


def test_view_on_the_upstream_fails_on_a_non_contiguous_one(runs, torch_says):
    c = check(runs["ViewBack"], "noncontiguous_upstream")
    assert c.status == "fail" and ".view" in c.message
    assert c.where == line_of("g.view(-1)", "ViewBack")
    assert "reshape" in c.fix and ".contiguous()" in c.fix
    assert "GV711-upstream-view" in codes(runs["ViewBack"])
    assert "view size is not compatible" in torch_says["transposed upstream ViewBack"]
    assert torch_says["contiguous upstream ViewBack"] == "ok"


def test_writing_into_the_upstream_is_named_and_out_keeps_its_true_gradient(runs, torch_says):
    res = runs["InplaceBack"]
    c = check(res, "noncontiguous_upstream")
    assert c.status == "fail" and "in place" in c.message and "in place" in c.fix
    assert "GV712-upstream-inplace" in codes(res)
    # the gradient recorded for `out` is the upstream (ones), not what backward wrote into it
    assert (res.tensor("out").grads["custom"] == 1.0).all()
    assert (res.tensor("x").grads["custom"] == 2.0).all()
    # user code raising inside another check is that check's failure at the user's line
    db = check(res, "double_backward")
    assert db.status == "fail" and "raised RuntimeError" in db.message
    assert db.where == line_of("g.mul_(2)", "InplaceBack")
    assert "written-to tensor" in torch_says["expanded upstream InplaceBack"]


def notes(result):
    return {f.code: f.severity for f in diagnose(result, compare_result(result))}


def test_vmap_skips_an_older_style_function_and_spells_out_the_port(runs, torch_says):
    """torch.func refusing forward(ctx, ...) or a Function without a vmap rule is no fault of
    an op that trains right: skip (not a fail that --strict counts), with the port, and a note."""
    old = check(runs["OldStyle"], "vmap")
    assert old.status == "skip" and "forward(ctx, ...)" in old.message
    assert "setup_context(ctx, inputs, output)" in old.message
    assert "generate_vmap_rule = True" in old.message and "OldStyle" in old.message
    assert old.where == line_of("def forward", "OldStyle")
    rule = check(runs["NoVmapRule"], "vmap")
    assert rule.status == "skip" and "generate_vmap_rule = True" in rule.message
    assert "jacrev over the op works" in rule.message
    assert notes(runs["OldStyle"])["GV731-vmap-setup-context"] == "info"
    assert notes(runs["NoVmapRule"])["GV732-vmap-no-rule"] == "info"
    assert "setup_context" in torch_says["vmap OldStyle"]
    assert "generate_vmap_rule" in torch_says["vmap NoVmapRule"]
    assert "jacrev" in check(runs["Cube"], "vmap").message


def test_autocast_names_the_line_that_mixes_dtypes(runs, torch_says):
    c = check(runs["LinearMixed"], "autocast")
    assert c.status == "fail" and "bfloat16" in c.message.lower() or "BFloat16" in c.message
    assert c.where == line_of("return g @ w.t()", "LinearMixed")
    assert "torch.amp.custom_fwd" in c.fix and "custom_bwd" in c.fix
    assert "GV721-autocast-dtype-mix" in codes(runs["LinearMixed"])
    assert "same dtype" in torch_says["autocast LinearMixed"]
    good = check(runs["LinearAmp"], "autocast")
    assert good.status == "pass" and "bfloat16" in good.message


def test_precision_tells_rounding_from_a_bug(runs):
    cancel, wrong = runs["SquareCancel"], runs["SquareWrong"]
    # the plain float32 comparison cannot tell: both differ from the default
    assert compare_result(cancel).tensors[0].verdict == "differs"
    c = check(cancel, "precision")
    assert c.status == "pass" and "rounding" in c.message
    assert c.tensors == ("x",)  # cleared as rounding: no finding may call x a bug
    w = check(wrong, "precision")
    assert w.status == "fail" and "float64 too" in w.message and "not float32 rounding" in w.message
    assert w.where == line_of("def backward", "SquareWrong") and w.tensors == ("x",)
    assert "GV751-precision-bug" in codes(wrong)
    assert "GV751-precision-bug" not in codes(cancel)
    assert "GV301-grad-wrong" not in codes(cancel)  # rounding: no finding says "a bug"
    assert "GV301-grad-wrong" in codes(wrong)
    assert_numbers_respect_their_tolerance(w.message, wrong.tensor("x").value)


def assert_numbers_respect_their_tolerance(message, x):
    """2.01 x for 2 x: in float64 the difference is 0.01 |x|, largest at the largest |x|, and
    the tolerance quoted is the one applied (1e-6 abs, scaled by the reference's peak 2 max|x|)."""
    peak = float(np.max(np.abs(x)))
    assert (
        f"max abs difference {fmt(0.01 * peak)} (tolerance {fmt(1e-6 * 2 * peak)} abs + "
        "1e-05 rel)" in message
    ), message


def test_compiled_says_its_backend_and_catches_a_python_side_effect(engine):
    reqs = [
        RunRequest(str(OPS), q, "torch", RunSettings(checks=("compiled",)))
        for q in ("Cube", "CountingBack")
    ]
    good, bad = engine.run(reqs)
    g = check(good, "compiled")
    assert g.status == "pass" and "aot_eager" in g.message
    b = check(bad, "compiled")
    assert b.status == "fail" and "eager" in b.message
    assert "; in float64 too: " in b.message and "not float32 rounding" in b.message
    assert "side effects" in b.fix
    assert "GV742-compiled-differs" in codes(bad)


def test_no_checks_unless_asked(runs, engine):
    (res,) = engine.run([RunRequest(str(OPS), "Cube", "torch", RunSettings(modes=("custom",)))])
    assert res.status == "ok" and res.checks == ()


def test_compiled_tells_the_ops_own_rounding_from_a_compiled_bug(engine):
    """SquareCancelFolded's eager backward rounds x to float32's spacing at 1e5 (2**-7), its
    compiled one computes 2 x exactly (as a compiler folding (x + c) - c would): 0.0078 apart in
    float32, nothing in float64: rounding, a pass. SquareCancelCompiledWrong rounds as much and
    returns 2.02 x when compiled: float64 differs too (0.02 max|x|), a failure."""
    reqs = [
        RunRequest(str(OPS), q, "torch", RunSettings(checks=("compiled", "precision")))
        for q in ("SquareCancelFolded", "SquareCancelCompiledWrong")
    ]
    folded, wrong = engine.run(reqs)
    assert check(folded, "precision").tensors == ("x",) == check(wrong, "precision").tensors
    c = check(folded, "compiled")
    assert c.status == "pass" and "float64 does not show: float32 rounding" in c.message
    assert "max abs difference 0.00779 at 5 of 200 elements" in c.message, c.message
    assert "GV742-compiled-differs" not in codes(folded)
    w = check(wrong, "compiled")
    peak = float(np.max(np.abs(wrong.tensor("x").value)))
    assert (
        w.status == "fail"
        and f"; in float64 too: max abs difference {fmt(0.02 * peak)} at "
        "200 of 200 elements (rtol 1e-05, atol 1e-06), so it is not float32 rounding"
        in w.message
    )
    assert notes(wrong)["GV742-compiled-differs"] == "error"


def test_a_vmapped_backward_that_is_wrong_stays_a_failure_in_float64(runs):
    """CountingVmap rounds as SquareCancel does and counts its calls: vmap's one batched call
    sees another count than each sample's own, in float64 as in float32."""
    c = check(runs["CountingVmap"], "vmap")
    assert c.status == "fail" and c.kind == "differs"
    assert "; in float64 too: max abs difference" in c.message
    assert c.message.endswith("so it is not float32 rounding"), c.message
    assert notes(runs["CountingVmap"])["GV734-vmap-differs"] == "error"


def test_checks_read_the_gradient_a_backward_writes_into_grad_itself(engine):
    """AccumulatingBack gives x its gradient through a nested torch.autograd.backward that
    writes it into x.grad, returning None, as checkpointing can: custom mode (loss.backward(),
    x.grad) reads 2 x. The checks read gradients the same way: the right op passes, and
    AccumulatingCounting (the same with a Python counter) fails compiled and the upstream
    layouts, which compared None with None and passed while they took autograd.grad."""
    reqs = [
        RunRequest(
            str(OPS),
            q,
            "torch",
            RunSettings(checks=("noncontiguous_upstream", "autocast", "compiled")),
        )
        for q in ("AccumulatingBack", "AccumulatingCounting")
    ]
    right, counting = engine.run(reqs)
    x = right.tensor("x")
    np.testing.assert_allclose(x.grads["custom"], 2 * np.asarray(x.value, np.float64), rtol=1e-6)
    assert [c.status for c in right.checks] == ["pass", "pass", "pass"], right.checks
    c = check(counting, "compiled")
    assert c.status == "fail" and c.kind == "differs" and "gradient for x than eager" in c.message
    n = check(counting, "noncontiguous_upstream")
    assert n.status == "fail" and n.kind == "differs"
    assert {"GV742-compiled-differs", "GV713-upstream-layout"} <= codes(counting)


def test_double_backward_reads_the_gradient_a_backward_writes_into_grad_itself(engine):
    """double_backward takes the first derivative as training does (loss.backward(create_graph=
    True), x.grad): a backward that writes x.grad through a nested, graph-keeping backward is
    differentiated again and agrees with numeric and default; with autograd.grad its first
    derivative was None, read as 'differs from the default's (a surrogate?)'."""
    [res] = engine.run(
        [
            RunRequest(
                str(OPS),
                "AccumulatingDifferentiable",
                "torch",
                RunSettings(checks=("double_backward",)),
            )
        ]
    )
    c = check(res, "double_backward")
    assert c.status == "pass" and c.message.endswith("and with the default's double backward"), c
