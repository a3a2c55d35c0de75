"""Diagnostics on real runs: each trigger op in tests/corpus/diag gets its code at its marked
line; the clean twins, the tutorials and the built-in traps behave as documented."""

import ast
from pathlib import Path

import pytest

from gradviz.compare import compare_result
from gradviz.diagnostics import CODES, diagnose
from gradviz.model import RunRequest

HERE = Path(__file__).resolve().parent
DIAG = HERE / "corpus" / "diag"
EXAMPLES = HERE.parent / "resources" / "examples"


def _ops(path: Path) -> list[tuple[str, str, int]]:
    """(qualname, expected code, TRIGGER line) of each top-level op with 'expect:' in its doc."""
    text = path.read_text()
    lines = text.splitlines()
    out = []
    for node in ast.parse(text).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            doc = ast.get_docstring(node) or ""
            if "expect:" in doc:
                code = doc.split("expect:")[1].split()[0]
                end = node.end_lineno
                line = next(i for i in range(node.lineno, end + 1) if "# TRIGGER" in lines[i - 1])
                out.append((node.name, code, line))
    return out


def _top_names(path: Path) -> list[str]:
    return [
        n.name
        for n in ast.parse(path.read_text()).body
        if isinstance(n, (ast.ClassDef, ast.FunctionDef))
        and not n.name.startswith("_")
        or isinstance(n, ast.FunctionDef)
        and n.name == "_gain"
    ]


TRIGGERS = [
    (DIAG / f"triggers_{fw}.py", fw, q, code, line)
    for fw in ("torch", "tf")
    for q, code, line in _ops(DIAG / f"triggers_{fw}.py")
]


@pytest.fixture(scope="module")
def runs(engine):
    """Every op of the diag corpus and the examples, in one engine call: {(file, qualname): result}."""
    reqs = [RunRequest(str(f), q, fw) for f, fw, q, _, _ in TRIGGERS]
    for fw in ("torch", "tf"):
        for path in (
            DIAG / f"clean_{fw}.py",
            EXAMPLES / f"tutorial_{fw}.py",
            EXAMPLES / f"traps_{fw}.py",
        ):
            cats = engine.load([str(path)])
            reqs += [RunRequest(str(path), op.qualname, fw) for c in cats for op in c.ops]
    return {(Path(r.request.file).name, r.request.qualname): r for r in engine.run(reqs)}


def _findings(runs, file: str, qualname: str):
    res = runs[(file, qualname)]
    return diagnose(res, compare_result(res))


def test_corpus_covers_every_code():
    covered = {code for *_, code, _ in TRIGGERS}
    contract = {c for c in CODES if c.startswith("GV7")}  # failed --checks: tests/test_checks_*
    assert covered >= set(CODES) - contract - {
        "GV000-diagnostic-failed",
        "GV104-grad-device",
        "GV402-non-finite-output",  # test_diagnostics_units
        "GV303-numeric-float64",  # test_numeric_float64
        "GV304-upstream-blind",  # test_upstream_blind
        "GV107-input-shape",  # test_input_shapes
        "GV108-upstream-unused",  # test_diagnostics_units
        "GV109-input-range",  # test_input_ranges
        "GV607-backward-never-called",  # test_uncalled_backward
        "GV608-vjp-residuals",  # JAX's: test_jax_diagnostics
        "GV609-jvp-nonlinear",
        "GV610-nondiff-array",
        "GV611-jvp-pair",
    }


@pytest.mark.parametrize(
    "path,fw,qualname,code,line", TRIGGERS, ids=[f"{fw}-{q}" for _, fw, q, _, _ in TRIGGERS]
)
def test_trigger_names_code_fix_and_line(runs, path, fw, qualname, code, line):
    found = _findings(runs, path.name, qualname)
    hits = [f for f in found if f.code == code]
    assert hits, f"{code} not found; got {[f.code for f in found]}"
    f = hits[0]
    assert f.where == f"{path}:{line}"
    assert f.severity in ("error", "warning", "info") and f.fix and f.message.endswith(".")
    assert f.framework == fw and f.title == CODES[code]
    assert "GV000-diagnostic-failed" not in {x.code for x in found}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_clean_twins_and_tutorials_have_no_warnings(runs, fw):
    for path in (DIAG / f"clean_{fw}.py", EXAMPLES / f"tutorial_{fw}.py"):
        ops = [q for (f, q) in runs if f == path.name]
        assert ops
        for q in ops:
            assert runs[(path.name, q)].status == "ok", q
            bad = [f.one_line() for f in _findings(runs, path.name, q) if f.severity != "info"]
            assert bad == [], (path.name, q)


def test_straight_through_tutorial_is_named_a_surrogate(runs):
    for file in ("tutorial_torch.py", "tutorial_tf.py"):
        qual = "RoundSTE" if "torch" in file else "round_ste"
        [f] = [f for f in _findings(runs, file, qual) if f.code == "GV302-grad-surrogate"]
        assert "straight-through" in f.message and "200 of 200" in f.message


def test_surrogate_kinds_are_told_apart(runs):
    msgs = {
        q: [
            f.message for f in _findings(runs, "triggers_torch.py", q) if f.code.startswith("GV30")
        ][0]
        for q in ("GradReversal", "ClippedSquare", "CubeWrongGrad")
    }
    assert "gradient reversal" in msgs["GradReversal"] and "-1 times" in msgs["GradReversal"]
    assert "gradient clipping" in msgs["ClippedSquare"] and "+-1" in msgs["ClippedSquare"]
    assert "looks like a bug" in msgs["CubeWrongGrad"]


def test_nan_finding_names_mode_count_and_input_values(runs):
    for file, q in (("triggers_torch.py", "DivideByInput"), ("triggers_tf.py", "divide_by_input")):
        [f] = [f for f in _findings(runs, file, q) if f.code == "GV401-non-finite"]
        assert f.severity == "error"
        assert "2 NaN of 4 elements" in f.message and "x = 0" in f.message
        assert "introduced 2" in f.message


def test_a_wrong_gradient_where_upstream_ones_cancels_is_no_straight_through_estimator(runs):
    """A softmax's true gradient under upstream ones is 0 at every element (the loss is
    sum(softmax) = 1), so a backward that keeps only the Jacobian's diagonal passes a gradient
    where 'the true gradient is 0': the straight-through pattern. The verdict finds the
    derivative defined and not 0 there (differs), and the finding says a bug, as the verdict
    does, not 'an intended straight-through estimator'."""
    for file, q in (
        ("triggers_torch.py", "SoftmaxDiagonalOnly"),
        ("triggers_tf.py", "softmax_diagonal_only"),
    ):
        res = runs[(file, q)]
        comp = compare_result(res)
        assert comp.tensors[0].name == "x" and comp.tensors[0].verdict == "differs"
        found = {f.code: f for f in diagnose(res, comp) if f.tensor == "x"}
        assert "GV302-grad-surrogate" not in found, found["GV302-grad-surrogate"].message
        f = found["GV301-grad-wrong"]
        assert f.severity == "error" and "no known surrogate pattern" in f.message


def test_a_negated_identity_is_a_gradient_reversal_whatever_its_name(runs):
    """DANN's ReverseLayerF and TF's flip_gradient carry no 'reverse grad' in their names nor a
    docstring: they read GV305 'sign flipped, a bug'. Their forward hands x back unchanged (its
    source and its numbers): minus the upstream there is a reversal by construction. A clamp
    that the drawn inputs leave unchanged has the identity's numbers, not its source: a
    negated gradient there stays a flipped sign."""
    for file, q in (("triggers_torch.py", "ReverseLayerF"), ("triggers_tf.py", "flip_gradient")):
        found = {f.code: f for f in _findings(runs, file, q) if f.tensor == "x"}
        assert "GV305-grad-sign-flipped" not in found
        f = found["GV302-grad-surrogate"]
        assert f.severity == "info" and "-1 times" in f.message
        assert "intended gradient reversal (its forward returns x unchanged, at " in f.message
    found = {f.code for f in _findings(runs, "triggers_torch.py", "ClampSignSlip")}
    assert "GV305-grad-sign-flipped" in found and "GV302-grad-surrogate" not in found


EXAMPLE_TRAPS = {
    ("traps_torch.py", "TooManyGrads"): "GV101-grad-count",
    ("traps_torch.py", "DetachedForward"): "GV501-no-default-path",
    ("traps_torch.py", "InPlaceNoMarkDirty"): "GV605-inplace-no-mark-dirty",
    ("traps_tf.py", "AssignWeights"): "GV601-keras-weights-assign",
    ("traps_tf.py", "CallReturnsGradFn"): "GV603-call-returns-grad-fn",
    ("traps_tf.py", "scale_by_variable"): "GV602-tf-missing-variables",
    ("traps_tf.py", "wrong_grad_shape"): "GV102-grad-shape",
}


@pytest.mark.parametrize("key", list(EXAMPLE_TRAPS), ids=[k[1] for k in EXAMPLE_TRAPS])
def test_each_builtin_trap_shows_its_diagnostic(runs, key):
    found = _findings(runs, *key)
    [f] = [f for f in found if f.code == EXAMPLE_TRAPS[key]]
    path = EXAMPLES / key[0]
    line = int(f.where.rsplit(":", 1)[1])
    assert f.where.startswith(str(path) + ":")
    src = path.read_text().splitlines()[line - 1]
    assert "WRONG" in src or "def grad" in src or "return" in src, src
