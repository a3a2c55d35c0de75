"""JAX-worded diagnostics (issue 31): each JAX rule trap is a finding at the user's line, in
JAX's words, of the class of mistake (resources/examples/traps_jax.py, one op per trap, and
tests/corpus/jax/rule_traps_jax.py, the same classes in other shapes), never on a right rule;
the JAX tutorial's ops read the verdicts and gradients its comments say."""

from pathlib import Path

import numpy as np
import pytest

from gradviz.compare import compare_result
from gradviz.diagnostics import diagnose
from gradviz.model import RunRequest, RunSettings
from gradviz.vocab import Framework
from tests.op_runs import run, verdicts

pytestmark = pytest.mark.skipif(not Framework.JAX.installed, reason="jax is not installed")

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "resources" / "examples"
TRAPS = EXAMPLES / "traps_jax.py"
TUTORIAL = EXAMPLES / "tutorial_jax.py"
MORE = HERE / "corpus" / "jax" / "rule_traps_jax.py"
ADVICE = HERE / "corpus" / "jax" / "advice_jax.py"
TRAP_CODES = {
    "GV101-grad-count",
    "GV102-grad-shape",
    "GV103-grad-dtype",
    "GV606-one-argument-unpacked",
    "GV107-input-shape",  # nor the input stories, told for an op's inputs, not a rule's
    "GV109-input-range",
    "GV608-vjp-residuals",
    "GV609-jvp-nonlinear",
    "GV610-nondiff-array",
    "GV611-jvp-pair",
}
# words of the other frameworks' advice that must not reach a JAX op's finding
NOT_JAX = ("ctx.", "save_for_backward", ".backward()", "torch", "tf.", "autograd", "detach")


@pytest.fixture(scope="module")
def runs(engine):
    """Every op of the three files in one engine call: {(file name, qualname): result}."""
    reqs = [
        RunRequest(str(path), op.qualname, "jax", RunSettings())
        for path in (TRAPS, TUTORIAL, MORE, ADVICE)
        for cat in engine.load([str(path)])
        for op in cat.ops
    ]
    return {(Path(r.request.file).name, r.request.qualname): r for r in engine.run(reqs)}


def _line(path: Path, text: str) -> int:
    [n] = [i for i, s in enumerate(path.read_text().splitlines(), 1) if text in s]
    return n


def _found(runs, file: str, qualname: str):
    res = runs[(file, qualname)]
    return diagnose(res, compare_result(res))


BUILT_IN = [
    ("too_many_cotangents", "GV101-grad-count", "return 2.0 * g, g  # WRONG"),
    ("residuals_mismatch", "GV608-vjp-residuals", "cos_x, x = res  # WRONG"),
    ("nonlinear_tangent", "GV609-jvp-nonlinear", "jnp.cos(x) * t * t  # WRONG"),
    ("tangent_only", "GV611-jvp-pair", "return jnp.cos(x) * t  # WRONG"),
    ("scale_nondiff", "GV610-nondiff-array", "def scale_nondiff(x, s):"),
    ("NondiffArray", "GV610-nondiff-array", "return scale_nondiff(x, self.scale)  # WRONG"),
]


@pytest.mark.parametrize("qualname, code, text", BUILT_IN, ids=[b[0] for b in BUILT_IN])
def test_each_builtin_jax_trap_is_its_finding_at_its_line(runs, qualname, code, text):
    res = runs[("traps_jax.py", qualname)]
    assert res.status == "error" and res.error.kind == "error"  # the user's mistake
    found = _found(runs, "traps_jax.py", qualname)
    traps = [f for f in found if f.code in TRAP_CODES]
    assert [f.code for f in traps] == [code], [f.one_line() for f in found]
    [f] = traps
    assert f.severity == "error" and f.framework == "jax"
    assert f.where == f"{TRAPS}:{_line(TRAPS, text)}"
    assert not any(w in f.message + f.fix for w in NOT_JAX), f.one_line()
    assert "GV000-diagnostic-failed" not in {x.code for x in found}


@pytest.mark.parametrize("qualname, code, text", BUILT_IN, ids=[b[0] for b in BUILT_IN])
def test_the_diagnostics_list_shows_the_finding_with_jaxs_exception_as_detail(
    runs, qualname, code, text
):
    from gradviz.app.analysis import analyze
    from gradviz.app.problems import problems

    res = runs[("traps_jax.py", qualname)]
    found = problems(("jax", str(TRAPS), qualname), analyze(res))
    assert [p.code for p in found] == [code]  # one entry: no raw exception beside it
    assert f"{res.error.type}: {res.error.message}" in found[0].detail


def test_builtin_wrong_factor_differs_by_one_and_a_half(runs):
    res = runs[("traps_jax.py", "wrong_factor")]
    x = np.asarray(res.tensor("x").value, dtype=np.float64)
    np.testing.assert_allclose(res.tensor("x").grads["custom"], 3.0 * x, rtol=1e-6)
    np.testing.assert_allclose(res.tensor("x").grads["default"], 2.0 * x, rtol=1e-6)
    assert verdicts(res)["x"] == "differs"
    [f] = [f for f in _found(runs, "traps_jax.py", "wrong_factor") if f.tensor == "x"]
    assert f.code == "GV301-grad-wrong" and "1.5 times the true gradient" in f.message
    assert (
        "in bwd" in f.message
        and f.fix == "Fix the constant factor in bwd unless the scaling is intended."
    )
    assert f.where == f"{TRAPS}:{_line(TRAPS, 'wrong_factor.defvjp(')}"


def _marked(path: Path) -> dict:
    """qualname -> (code, line) of the `# GVxxx` mark in each wrong op's rule."""
    out, current = {}, None
    for i, s in enumerate(path.read_text().splitlines(), 1):
        if s.startswith("def ") and not s.startswith("def _"):
            current = s[4 : s.index("(")]
        elif s.startswith("class "):
            current = s[6 : s.index("(")]
        if "  # GV" in s and current:
            out[current] = ("GV" + s.rsplit("# GV", 1)[1][:3], i)
    return out


MORE_MARKS = _marked(MORE)


@pytest.mark.parametrize("qualname", sorted(MORE_MARKS))
def test_each_class_of_mistake_is_found_in_other_shapes(runs, qualname):
    code, line = MORE_MARKS[qualname]
    found = _found(runs, "rule_traps_jax.py", qualname)
    traps = [f for f in found if f.code in TRAP_CODES]
    assert [f.code[:5] for f in traps] == [code], [f.one_line() for f in found]
    assert traps[0].where == f"{MORE}:{line}"
    assert not any(w in traps[0].message + traps[0].fix for w in NOT_JAX)


def test_a_modules_wrong_rule_is_named_at_the_rules_line(runs):
    found = _found(runs, "rule_traps_jax.py", "EqxCallsNonlinear")
    [f] = [f for f in found if f.code in TRAP_CODES]
    # JAX's backward pass reaches no_tuple's bwd first: that rule, by name, at its line
    assert f.code == "GV101-grad-count" and "custom_vjp no_tuple returns a single" in f.message
    assert f.where == f"{MORE}:{MORE_MARKS['no_tuple'][1]}"


def test_the_corpus_marks_every_class():
    assert {c for c, _ in MORE_MARKS.values()} == {
        "GV101",
        "GV102",
        "GV608",
        "GV609",
        "GV610",
        "GV611",
    }
    assert len(MORE_MARKS) >= 12


@pytest.mark.parametrize(
    "qualname",
    [
        "right_product",
        "right_lambda",
        "right_tanh",
        "right_two",
        "scaled_by",
        "eqx_right",
        "right_list_pair",
        "right_dict_pair",
    ],
)
def test_right_rules_get_no_trap_finding_and_match(runs, qualname):
    res = runs[("rule_traps_jax.py", qualname)]
    assert res.status == "ok", res.error
    assert set(verdicts(res).values()) == {"match"}
    assert [f.one_line() for f in _found(runs, "rule_traps_jax.py", qualname)] == []


@pytest.mark.parametrize(
    "qualname, error", [("asserts_in_primal", "AssertionError"), ("says_nonlinear", "ValueError")]
)
def test_an_error_of_the_users_own_is_not_called_a_nonlinear_tangent(runs, qualname, error):
    res = runs[("rule_traps_jax.py", qualname)]
    assert res.error.type == error and "matrix" in res.error.message
    assert not [f for f in _found(runs, "rule_traps_jax.py", qualname) if f.code in TRAP_CODES]


def test_tutorial_straight_through_custom_ones_default_zeros(runs):
    res = runs[("tutorial_jax.py", "round_ste")]
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.ones(200))
    np.testing.assert_array_equal(res.tensor("x").grads["default"], np.zeros(200))
    assert verdicts(res)["x"] == "surrogate"
    [f] = _found(runs, "tutorial_jax.py", "round_ste")
    assert f.code == "GV302-grad-surrogate" and "straight-through" in f.message
    assert f.where == f"{TUTORIAL}:{_line(TUTORIAL, 'round_ste.defvjp(')}"


def test_tutorial_reversal_is_minus_the_upstream_and_named_intended(engine):
    res = run(engine, TUTORIAL, "grad_reverse", "jax", RunSettings(upstream="random"))
    up = np.asarray(res.tensor("out").grads["custom"], dtype=np.float64)
    assert np.ptp(up) > 0.5
    np.testing.assert_allclose(res.tensor("x").grads["custom"], -up, rtol=1e-6)
    np.testing.assert_allclose(res.tensor("x").grads["default"], up, rtol=1e-6)
    assert verdicts(res)["x"] == "differs"
    [f] = [f for f in diagnose(res) if f.tensor == "x"]
    assert f.code == "GV302-grad-surrogate" and "gradient reversal" in f.message


def test_tutorial_log1pexp_and_mul_weights_match_exactly(runs):
    res = runs[("tutorial_jax.py", "log1pexp")]
    x = np.asarray(res.tensor("x").value, dtype=np.float64)
    sigmoid = 1.0 / (1.0 + np.exp(-x))
    np.testing.assert_allclose(res.tensor("x").grads["custom"], sigmoid, rtol=1e-5, atol=1e-7)
    assert verdicts(res)["x"] == "match"
    mul = runs[("tutorial_jax.py", "mul_weights")]
    xs, ws = (np.asarray(mul.tensor(n).value) for n in ("x", "weights"))
    np.testing.assert_array_equal(mul.tensor("x").grads["custom"], ws)
    np.testing.assert_array_equal(mul.tensor("weights").grads["custom"], xs)
    layer = runs[("tutorial_jax.py", "MulLayer")]
    xl, wl = (np.asarray(layer.tensor(n).value) for n in ("x", "weights"))  # weights: seeded
    assert layer.tensor("weights").role == "param" and np.ptp(wl) > 0.1
    np.testing.assert_array_equal(layer.tensor("x").grads["custom"], wl)
    np.testing.assert_array_equal(layer.tensor("weights").grads["custom"], xl)
    for key in (
        ("tutorial_jax.py", "log1pexp"),
        ("tutorial_jax.py", "mul_weights"),
        ("tutorial_jax.py", "MulLayer"),
    ):
        assert set(verdicts(runs[key]).values()) == {"match"}, key
        assert _found(runs, *key) == [], key


ADVICE_MARKS = _marked(ADVICE)


@pytest.mark.parametrize("qualname", sorted(ADVICE_MARKS))
def test_the_neutral_checks_advise_in_jax_words(runs, qualname):
    code, line = ADVICE_MARKS[qualname]
    found = _found(runs, "advice_jax.py", qualname)
    hits = [f for f in found if f.code.startswith(code)]
    assert hits, [f.one_line() for f in found]
    assert hits[0].where == f"{ADVICE}:{line}"
    for f in found:
        assert not any(w in f.message + f.fix for w in NOT_JAX), f.one_line()


def test_jax_advice_names_the_rules_parts(runs):
    def one(qualname, code):
        return next(f for f in _found(runs, "advice_jax.py", qualname) if f.code.startswith(code))

    assert "bwd never uses the cotangent" in one("ignores_cotangent", "GV108").message
    assert "fwd" in one("fwd_changes_output", "GV201").fix
    assert "Fix the sign in bwd" in one("flipped", "GV305").fix
    assert "jnp.where" in one("nan_cotangent", "GV401").fix
    assert "tangent rule" in one("tangent_factor", "GV301").fix
    assert '"x": (1, 8, 8, 3)' in one("NeedsFeatures", "GV107").fix  # channels last
    eqx = one("eqx_ignores_cotangent", "GV108").fix  # equinox's bwd returns no tuple
    assert eqx == (
        "Multiply by the cotangent: return g * (the derivative of the forward), the first "
        "argument's cotangent alone."
    )


def test_equinox_rules_are_named_so_with_their_own_advice(runs):
    [f] = [f for f in _found(runs, "rule_traps_jax.py", "eqx_tuple") if f.code in TRAP_CODES]
    assert "equinox.filter_custom_vjp eqx_tuple returns a tuple of 1" in f.message
    assert "not a tuple" in f.fix
    [r] = [f for f in _found(runs, "rule_traps_jax.py", "eqx_residuals") if f.code in TRAP_CODES]
    assert "residuals 'residuals'" in r.message and "`c, s = residuals`" in r.message


def test_a_tangent_rule_returning_no_pair_is_gv611_in_jaxs_words(runs):
    """JAX checks the tangent rule's (primal_out, tangent_out) after the rule returned, in
    words naming no line: the finding says what the rule returned, at its return line, also
    for a Module calling the rule (whose error stands at the call)."""
    found = {
        q: [f for f in _found(runs, "rule_traps_jax.py", q) if f.code in TRAP_CODES]
        for q in ("tangent_only", "three_returned", "tangent_in_tuple", "CallsTangentOnly")
    }
    assert {q: [f.code for f in fs] for q, fs in found.items()} == {
        q: ["GV611-jvp-pair"] for q in found
    }
    [single], [three], [tuple_], [module] = found.values()
    assert "returns one value (`jnp.cos(p[0]) * t[0]`) where JAX needs a pair" in single.message
    assert "(a lambda) of custom_jvp tangent_only" in single.message
    assert "`_three_returned_jvp`) of custom_jvp three_returned returns a tuple of 3" in (
        three.message
    )
    assert "tangent output `(jnp.cos(x) * t,)` is structured as PyTreeDef((*,))" in tuple_.message
    assert "primal output is PyTreeDef(*)" in tuple_.message
    assert module.where == single.where == f"{MORE}:{MORE_MARKS['tangent_only'][1]}"
    assert module.message == single.message
    for f in (single, three, tuple_):
        assert f.severity == "error" and "return jnp.sin(x), jnp.cos(x) * t" in f.fix
    res = runs[("rule_traps_jax.py", "CallsTangentOnly")]
    assert res.error.where == f"{MORE}:{_line(MORE, 'self.scale.value * tangent_only(x)')}"


@pytest.mark.parametrize("qualname, code, text", BUILT_IN, ids=[b[0] for b in BUILT_IN])
def test_the_error_stands_at_the_rules_line_where_jax_named_none(runs, qualname, code, text):
    """JAX raises a rule's mistake after the rule returned (no frame of the user's): the
    error then names the line the finding names, not the op's def line; an error raised in the
    user's own code keeps that line."""
    res = runs[("traps_jax.py", qualname)]
    [f] = [f for f in _found(runs, "traps_jax.py", qualname) if f.code in TRAP_CODES]
    if not res.error.traceback:
        assert res.error.where == f.where == f"{TRAPS}:{_line(TRAPS, text)}"
    assert res.mode_errors["custom"].where == res.error.where


def test_errors_without_a_user_frame_move_to_the_rules_line_in_every_shape(runs):
    moved = 0
    for (file, qualname), res in runs.items():
        if res.status != "error" or file not in ("traps_jax.py", "rule_traps_jax.py"):
            continue
        traps = [f for f in _found(runs, file, qualname) if f.code in TRAP_CODES]
        if res.error.traceback or not traps:
            continue
        assert res.error.where == traps[0].where, (qualname, res.error.one_line())
        moved += 1
    # too_many_cotangents and nonlinear_tangent, and the corpus's bwd count / shape, tangent
    # type / pair and non-linear tangent rules
    assert moved >= 10
    # the op's own def line is where none of them stands
    too_many = runs[("traps_jax.py", "too_many_cotangents")]
    assert too_many.error.where != too_many.op.where
