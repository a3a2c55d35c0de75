"""The seed tutorial's trap (issue 25, 1): an nn.Module / Keras Layer with a backward()-like method
that autograd and Keras never call. Real workers, both frameworks: the error GV607 at that
method's line; where nothing else overrides the gradient, the verdict says the custom gradient
was not found (broken), not match; where a Function / custom_gradient of the op's runs, its own
verdict stands. Corpus: tests/corpus/diag/uncalled_backward_{torch,tf}.py."""

import json
from pathlib import Path

import numpy as np
import pytest

from gradviz.compare import compare_result
from gradviz.diagnostics import diagnose
from gradviz.model import RunRequest
from gradviz.report import report_dict

DIAG = Path(__file__).resolve().parent / "corpus" / "diag"
OPS = {
    "torch": ("Double", "WithFunction", "IgnoresUpstream", "Hooked", "CallsItsGrad", "Utilities"),
    "tf": ("Double", "WithCustomGradient", "CallsItsGrad", "TapeHelper"),
}


def path_of(framework: str) -> Path:
    return DIAG / f"uncalled_backward_{framework}.py"


def marked(framework: str, qualname: str) -> str:
    """file:line of the NEVER CALLED method inside class `qualname`."""
    path = path_of(framework)
    lines = path.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"class {qualname}("))
    return f"{path}:{next(i for i in range(start, len(lines)) if 'NEVER CALLED' in lines[i]) + 1}"


@pytest.fixture(scope="module")
def runs(engine):
    reqs = [RunRequest(str(path_of(fw)), q, fw) for fw, names in OPS.items() for q in names]
    out = {}
    for res in engine.run(reqs):
        assert res.status == "ok", res.error
        out[(res.framework, res.request.qualname)] = res
    return out


def found(res, code="GV607-backward-never-called"):
    return [f for f in diagnose(res, compare_result(res)) if f.code == code]


@pytest.mark.parametrize("framework", ["torch", "tf"])
def test_a_backward_nothing_calls_is_an_error_and_the_custom_gradient_not_found(runs, framework):
    res = runs[(framework, "Double")]
    where = marked(framework, "Double")
    assert res.uncalled_backward == (f"Double.backward at {where}",) and res.no_own_gradient
    x = res.tensor("x")
    # what ran is the framework's own autodiff of x * x, never the method's 2 * grad
    np.testing.assert_array_equal(x.grads["custom"], 2 * x.value)
    np.testing.assert_array_equal(x.grads["custom"], x.grads["default"])
    verdicts = {t.name: t for t in compare_result(res).tensors}
    assert verdicts["x"].verdict == "broken"
    assert verdicts["x"].explanation.startswith(
        f"custom gradient not found: Double.backward at {where} is never called"
    )
    assert verdicts["out"].verdict == "match"  # the upstream itself: no backward makes it
    [f] = found(res)
    assert (f.severity, f.where) == ("error", where)
    assert "never called" in f.message and "custom gradient not found" in f.message
    if framework == "torch":
        assert "torch.autograd.Function" in f.fix and "DoubleFn.apply(x)" in f.fix
        assert "Double.forward" in f.fix
    else:
        assert "@tf.custom_gradient" in f.fix and "inside Double.call" in f.fix
    ops = report_dict([res], res.request.settings)["ops"]
    assert json.loads(json.dumps(ops))[0]["uncalled_backward"] == {
        "methods": [f"Double.backward at {where}"],
        "no_own_gradient": True,
    }


@pytest.mark.parametrize(
    "framework, qualname, method",
    [("torch", "WithFunction", "backward"), ("tf", "WithCustomGradient", "custom_grad")],
)
def test_with_a_custom_gradient_that_runs_the_leftover_method_is_flagged_the_verdict_kept(
    runs, framework, qualname, method
):
    res = runs[(framework, qualname)]
    where = marked(framework, qualname)
    assert res.uncalled_backward == (f"{qualname}.{method} at {where}",)
    assert not res.no_own_gradient
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], 2 * x.value)
    assert {t.name: t.verdict for t in compare_result(res).tensors} == {
        "x": "match",
        "out": "match",
    }
    [f] = found(res)
    assert (f.severity, f.where) == ("error", where)
    assert "custom gradient its forward applies" in f.message
    assert f.fix.startswith(f"Remove {qualname}.{method}")


def test_the_never_called_method_is_not_taken_for_the_ops_backward(runs):
    """GV108 read the Module's get_gradient (it ignores its upstream) as the op's backward."""
    res = runs[("torch", "IgnoresUpstream")]
    [f] = found(res)
    assert f.where == marked("torch", "IgnoresUpstream")
    assert not found(res, "GV108-upstream-unused")
    assert compare_result(res).tensors[0].verdict == "broken"


def test_a_hook_that_changes_the_gradient_is_not_called_custom_gradient_not_found(runs):
    res = runs[("torch", "Hooked")]
    assert res.uncalled_backward and not res.no_own_gradient
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], 4 * x.value)
    assert not compare_result(res).tensors[0].explanation.startswith("custom gradient not found")


@pytest.mark.parametrize(
    "framework, qualname",
    [
        ("torch", "CallsItsGrad"),
        ("torch", "Utilities"),
        ("tf", "CallsItsGrad"),
        ("tf", "TapeHelper"),
    ],
)
def test_methods_that_are_called_or_are_no_gradient_formula_say_nothing(runs, framework, qualname):
    res = runs[(framework, qualname)]
    assert res.uncalled_backward == () and not res.no_own_gradient
    assert not found(res)
    assert all(t.verdict == "match" for t in compare_result(res).tensors)
