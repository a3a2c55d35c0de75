"""The built-in examples say what gradviz reports (issue 13 item 9): each docstring that names a
verdict names the one a real run gives, and the verdict follows DESIGN.md's invariants."""

import re

import numpy as np
import pytest
from op_runs import verdicts

from gradviz.compare import compare_result
from gradviz.model import RunRequest, RunSettings, TensorResult

# (file, qualname, framework, tensor, verdict the docstring names)
DOCUMENTED = [
    ("traps_torch.py", "DetachedForward", "torch", "x", "match"),
    ("traps_torch.py", "InPlaceNoMarkDirty", "torch", "x", "error"),
    ("tutorial_torch.py", "RoundSTE", "torch", "x", "surrogate"),
    ("tutorial_tf.py", "round_ste", "tf", "x", "surrogate"),
]


def _docstring(path, qualname) -> str:
    import ast

    tree = ast.parse(path.read_text())
    node = next(n for n in ast.walk(tree) if getattr(n, "name", None) == qualname)
    return ast.get_docstring(node)


@pytest.mark.parametrize("file, qualname, framework, tensor, named", DOCUMENTED)
def test_example_docstrings_name_the_verdict_a_run_gives(
    engine, examples_dir, file, qualname, framework, tensor, named
):
    path = examples_dir / file
    doc = _docstring(path, qualname)
    assert set(re.findall(r"`(match|surrogate|differs|non-finite|broken|error)`", doc)) == {named}
    [res] = engine.run([RunRequest(str(path), qualname, framework, RunSettings())])
    assert res.status == "ok", res.error
    assert verdicts(res)[tensor] == named


def test_inplace_trap_is_an_error_not_a_green_match(engine, examples_dir):
    path = examples_dir / "traps_torch.py"
    [res] = engine.run([RunRequest(str(path), "InPlaceNoMarkDirty", "torch", RunSettings())])
    assert "default" in res.mode_errors and "x" in res.inplace_inputs
    x = {t.name: t for t in compare_result(res).tensors}["x"]
    assert x.verdict == "error"
    assert "in place" in x.explanation and "custom agrees with numeric" in x.explanation
    value = res.tensor("x").value  # the custom gradient is still 2, numeric confirms it
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.full_like(value, 2.0))


WRONG_DETACHED = """\
import numpy as np
import torch


class DetachedWrongGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.from_numpy(np.tanh(x.detach().numpy()))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (1 - torch.tanh(x))       # WRONG: tanh' is 1 - tanh(x)**2
"""


def test_detached_forward_with_a_wrong_backward_differs(engine, write_module):
    """Default has no path, so nothing but numeric can catch a wrong custom: it must."""
    path = write_module("detached_wrong.py", WRONG_DETACHED)
    [res] = engine.run([RunRequest(path, "DetachedWrongGrad", "torch", RunSettings())])
    assert "default" in res.tensor("x").absent
    x = {t.name: t for t in compare_result(res).tensors}["x"]
    assert x.verdict == "differs" and "where the derivative is defined and not 0" in x.explanation


def _tensor(custom, numeric, absent="no gradient path"):
    return TensorResult(
        "x",
        "input",
        (len(custom),),
        "float64",
        np.zeros(len(custom)),
        {"custom": np.asarray(custom, float), "numeric": np.asarray(numeric, float)},
        {"default": absent},
    )


def test_no_default_path_surrogate_only_where_numeric_is_zero():
    from gradviz.compare import verdict

    # straight-through: custom 1 where the true derivative is 0
    assert verdict(_tensor(np.ones(200), np.zeros(200)))[0] == "surrogate"
    # one finite difference straddling a rounding step is not a wrong gradient
    n = np.zeros(200)
    n[7] = 5e5
    assert verdict(_tensor(np.ones(200), n))[0] == "surrogate"
    # right everywhere: a match, default's absence a note (DESIGN.md "Verdicts")
    g = np.linspace(-1, 1, 200)
    v, why = verdict(_tensor(g, g))
    assert v == "match" and "default gives no gradient (no gradient path)" in why
    # wrong where numeric is not 0
    assert verdict(_tensor(g * 2, g))[0] == "differs"
