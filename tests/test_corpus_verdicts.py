"""Issue 24's invariants, over every op of tests/corpus and the built-in examples: no custom
gradient off the numeric reference reads `match`, and none on it reads anything else (DESIGN.md
"Verdicts": custom is judged against the truth, default is a witness); no tensor whose verdict
passes carries an error-level finding. tests/corpus/verdicts holds one op per class of the
issue in both frameworks, each docstring naming the verdict its `x` reads."""

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from gradviz.compare import compare_result
from gradviz.compare.metrics import close_mask, tolerances
from gradviz.compare.verdicts import PASSING, numeric_defined
from gradviz.diagnostics import diagnose
from gradviz.model import CHECKS, RunRequest, RunSettings
from tests.op_runs import corpus_files, run, verdicts

CLASSES = Path(__file__).resolve().parent / "corpus" / "verdicts"


def _documented(path: Path) -> dict:
    """qualname -> the verdict its docstring names ("verdict: match" at its end)."""
    out = {}
    for node in ast.parse(path.read_text()).body:
        doc = ast.get_docstring(node) if isinstance(node, (ast.ClassDef, ast.FunctionDef)) else None
        found = re.search(r"verdict: ([a-z-]+)\s*$", doc or "")
        if found:
            out[node.name] = found.group(1)
    return out


CASES = [
    (fw, name, want)
    for fw, file in (("torch", "classes_torch.py"), ("tf", "classes_tf.py"))
    for name, want in _documented(CLASSES / file).items()
]


@pytest.mark.parametrize("fw, qualname, want", CASES, ids=[f"{c[1]}[{c[0]}]" for c in CASES])
def test_each_class_reads_the_verdict_its_docstring_names(engine, fw, qualname, want):
    path = CLASSES / f"classes_{fw}.py"
    res = run(engine, path, qualname, fw)
    assert verdicts(res)["x"] == want, compare_result(res).tensors[0].explanation


def _off(c, n, dtype) -> int:
    """Elements at which custom is off numeric, numeric defined there (the invariant's own count)."""
    c, n = np.asarray(c, np.float64).reshape(-1), np.asarray(n, np.float64).reshape(-1)
    tol = tolerances(dtype, numeric=True)
    keep = numeric_defined(c, n)
    atol = tol.atol_for(n[keep]) if keep.any() else tol.atol
    return int((~close_mask(c, n, tol, atol) & keep).sum())


def _kinks(n: int) -> int:
    return max(1, int(0.01 * n)) if n > 1 else 0


def test_no_wrong_gradient_reads_match_and_no_exact_one_anything_else(engine):
    reqs = [
        RunRequest(cat.file, op.qualname, cat.framework, RunSettings())
        for cat in engine.load(corpus_files(examples=True))
        for op in cat.ops
    ]
    assert len(reqs) >= 130
    problems, exact_seen, off_seen = [], 0, 0
    for res in engine.run(reqs):
        name = f"{Path(res.request.file).name}::{res.request.qualname} ({res.framework})"
        comp = compare_result(res)
        found = diagnose(res, comp)
        for t, tc in zip(res.tensors, comp.tensors):
            errors = [f.code for f in found if f.tensor == t.name and f.severity == "error"]
            if tc.verdict in PASSING and errors:
                problems.append(f"{name} {t.name}: {tc.verdict} beside {errors}")
            c, n = t.grads.get("custom"), t.grads.get("numeric")
            if c is None or n is None or np.size(c) != np.size(n) or tc.verdict == "error":
                continue
            if not np.all(np.isfinite(c)):
                continue
            off = _off(c, n, t.dtype)
            probe = t.probe.get("as_numeric", t.probe) if t.probe is not None else None
            if off > _kinks(np.size(n)):
                off_seen += 1
                if tc.verdict == "match":
                    problems.append(
                        f"{name} {t.name}: match, off numeric at {off}: {tc.explanation}"
                    )
            elif off == 0 and (probe is None or probe["allclose"]):
                exact_seen += 1
                not_found = res.uncalled_backward and tc.verdict == "broken"  # GV607, by design
                if tc.verdict != "match" and not not_found:
                    problems.append(f"{name} {t.name}: exact, reads {tc.verdict}: {tc.explanation}")
    assert exact_seen >= 150 and off_seen >= 20  # both kinds were there to be judged
    assert problems == []


@pytest.mark.parametrize(
    "fw, against, along",
    [("torch", "BackwardsSTE", "RoundSTE"), ("tf", "backwards_ste", "round_ste")],
)
def test_a_surrogate_against_its_step_is_a_warning(engine, fw, against, along):
    path = CLASSES / f"classes_{fw}.py"
    res = run(engine, path, against, fw)
    [f] = [f for f in diagnose(res) if f.tensor == "x" and f.code.startswith("GV3")]
    assert f.code == "GV309-surrogate-against-step" and f.severity == "warning"
    assert "against the forward's step at 200 of 200 elements" in f.message
    assert "never decreases" in f.message and f.where.startswith(str(path))
    # the same step with the upstream passed on as it is: an intended estimator, said once
    codes = [f.code for f in diagnose(run(engine, path, along, fw)) if f.tensor == "x"]
    assert "GV302-grad-surrogate" in codes and "GV309-surrogate-against-step" not in codes


@pytest.mark.parametrize(
    "fw, random_one, plain",
    [("torch", "StochasticSTE", "RoundSTE"), ("tf", "stochastic_ste", "round_ste")],
)
def test_a_random_backward_is_said_once_and_no_check_compares_two_draws(
    engine, fw, random_one, plain
):
    path = CLASSES / f"classes_{fw}.py"
    res = run(engine, path, random_one, fw, RunSettings(checks=CHECKS))
    assert verdicts(res)["x"] == "surrogate"
    assert [c.name for c in res.checks] == list(CHECKS)
    for c in res.checks:
        assert c.status == "skip" and c.message.startswith("the custom backward is random"), c
    assert not [f for f in diagnose(res) if f.severity == "error"]
    # the same surrogate drawn from no RNG: the checks run
    calm = run(engine, path, plain, fw, RunSettings(checks=CHECKS))
    assert not [c for c in calm.checks if "backward is random" in c.message]
    assert {c.status for c in calm.checks} >= {"pass"}
