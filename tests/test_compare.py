"""Verdicts, metrics, stats and parity on hand-built results (numpy only, no framework)."""

import json
import math

import numpy as np
import pytest

from gradviz.compare import (
    VERDICTS,
    Tol,
    compare_result,
    mode_stats,
    pair_metrics,
    parity,
    summary_counts,
    tolerances,
    verdict,
)
from gradviz.model import (
    ErrorInfo,
    NumericInfo,
    OpInfo,
    RunRequest,
    RunResult,
    RunSettings,
    TensorResult,
)

F32, F64 = np.float32, np.float64


def tensor(name="x", dtype="float32", role="input", value=None, absent=None, info=None, **grads):
    arrs = {k: np.asarray(v, dtype=F32 if dtype == "float32" else F64) for k, v in grads.items()}
    shape = (
        next(iter(arrs.values())).shape
        if arrs
        else (np.asarray(value).shape if value is not None else (0,))
    )
    return TensorResult(
        name,
        role,
        shape,
        dtype,
        None if value is None else np.asarray(value),
        arrs,
        dict(absent or {}),
        info,
    )


def result(name, framework, tensors, status="ok", error=None, mode_errors=None):
    req = RunRequest(f"/u/{name}.py", name, framework, RunSettings())
    op = OpInfo(name, framework, "function", name, f"/u/{name}.py", 3)
    return RunResult(req, op, "cpu", status, error, tuple(tensors), dict(mode_errors or {}))


# --- tolerances and numbers ------------------------------------------------------------------
def test_tolerances_by_dtype_and_against_numeric():
    assert tolerances("float32") == Tol(1e-4, 1e-5)
    assert tolerances("float64") == Tol(1e-7, 1e-9)
    assert tolerances("float32", numeric=True) == Tol(2e-3, 1e-3)
    assert tolerances("float64", numeric=True) == Tol(1e-5, 1e-6)


def test_atol_scales_with_reference_magnitude():
    tol = Tol(rtol=0.0, atol=1e-5)
    assert tol.atol_for(np.array([0.5, -0.2])) == 1e-5
    assert tol.atol_for(np.array([-1000.0, 2.0, np.nan])) == pytest.approx(1e-2)
    # 1e3 * 1e-5 = 1e-2 absolute allowed around a reference of size 1000
    assert pair_metrics(np.array([1000.009]), np.array([1000.0]), tol).allclose
    assert not pair_metrics(np.array([1000.02]), np.array([1000.0]), tol).allclose


def test_mode_stats_exact_values_and_nonfinite_ignored():
    s = mode_stats(np.array([3.0, -4.0, 0.0, np.nan, np.inf], dtype=F32))
    assert s.as_dict() == {
        "n": 5,
        "nan": 1,
        "inf": 1,
        "zeros": 1,
        "min": -4.0,
        "max": 3.0,
        "mean": pytest.approx(-1 / 3),
        "std": pytest.approx(math.sqrt(74 / 9)),
        "l2": 5.0,
        "abs_max": 4.0,
    }
    json.dumps(s.as_dict(), allow_nan=False)  # JSON-safe python numbers
    assert all(type(v) in (int, float) for v in s.as_dict().values())


def test_mode_stats_absent_and_all_nan():
    assert mode_stats(None, "None").as_dict() == {"absent": True, "reason": "None"}
    s = mode_stats(np.array([np.nan, np.nan]))
    assert s.nan == 2 and s.mean is None and s.l2 is None


def test_pair_metrics_exact():
    m = pair_metrics(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 4.0]), Tol(1e-4, 1e-5))
    assert m.n == 3 and m.n_differ == 1 and m.allclose is False
    assert m.max_abs_err == 1.0 and m.max_rel_err == pytest.approx(0.25)
    assert m.norm_ratio == pytest.approx(math.sqrt(14) / math.sqrt(21))
    assert m.cosine == pytest.approx(17 / math.sqrt(14 * 21))
    assert m.worst_index == 2
    assert m.atol == pytest.approx(4e-5)  # 1e-5 * max|reference| = 1e-5 * 4


def test_pair_metrics_nan_at_same_place_is_equal():
    a = np.array([np.nan, 1.0, np.inf])
    assert pair_metrics(a, a.copy(), Tol(1e-4, 1e-5)).allclose
    m = pair_metrics(np.array([np.nan, 1.0]), np.array([0.0, 1.0]), Tol(1e-4, 1e-5))
    assert m.n_differ == 1 and not m.allclose and m.max_abs_err == 0.0


def test_pair_metrics_zero_norms():
    m = pair_metrics(np.zeros(3), np.zeros(3), Tol(1e-4, 1e-5))
    assert m.cosine == 1.0 and m.norm_ratio == 1.0 and m.allclose
    m = pair_metrics(np.ones(3), np.zeros(3), Tol(1e-4, 1e-5))
    assert m.cosine is None and m.norm_ratio is None and m.n_differ == 3


def test_pair_metrics_shape_mismatch_is_reported_not_raised():
    m = pair_metrics(np.ones(3), np.ones(4), Tol(1e-4, 1e-5))
    assert m.allclose is False and m.shape_mismatch == "(3,) vs (4,)"


# --- verdicts ------------------------------------------------------------------------------------
def test_straight_through_custom_ones_default_zeros_is_surrogate():
    t = tensor(custom=np.ones(200), default=np.zeros(200))
    v, why = verdict(t)
    assert v == "surrogate"
    assert "200 of 200" in why and "default is 0" in why


def test_partial_straight_through_zeros_only_where_differing():
    d = np.ones(10)
    d[3:6] = 0
    assert verdict(tensor(custom=np.ones(10), default=d))[0] == "surrogate"
    d[7] = 0.5  # a differing element where default is not zero
    assert verdict(tensor(custom=np.ones(10), default=d))[0] == "differs"


def test_default_absent_and_custom_on_numeric_is_match_with_a_note_on_default():
    # DESIGN.md "Verdicts": custom agreeing with numeric is a match whatever default does
    t = tensor(custom=np.ones(5), numeric=np.ones(5), absent={"default": "None (tf.round)"})
    v, why = verdict(t)
    assert v == "match" and "custom agrees with numeric on all 5 elements" in why
    assert "default gives no gradient (None (tf.round))" in why and "unreliable" in why


def test_default_absent_and_numeric_zero_is_surrogate():
    t = tensor(custom=np.ones(5), numeric=np.zeros(5), absent={"default": "None (tf.round)"})
    v, why = verdict(t)
    assert v == "surrogate" and "all 5 where numeric is exactly 0" in why


def test_default_absent_and_no_numeric_is_unchecked():
    v, why = verdict(tensor(custom=np.ones(5), absent={"default": "None (tf.round)"}))
    assert v == "unchecked" and "nothing independent checks" in why


def test_both_absent_is_broken():
    t = tensor(value=np.zeros(4), absent={"custom": "graph cut", "default": "detach"})
    v, why = verdict(t)
    assert v == "broken" and "graph cut" in why and "detach" in why


def test_custom_absent_default_present_is_broken():
    v, why = verdict(tensor(default=[3.0, 4.0], absent={"custom": "None"}))
    assert v == "broken"
    assert "custom backward gives no gradient" in why and "l2 norm 5" in why


def test_nan_in_custom_is_non_finite_with_counts():
    t = tensor(custom=[1.0, np.nan, np.inf, np.nan], default=[1.0, 1.0, 1.0, 1.0])
    v, why = verdict(t)
    assert v == "non-finite"
    assert "2 NaN and 1 Inf of 4 elements" in why and "default is finite there" in why


def test_nan_in_both_at_same_places():
    t = tensor(custom=[1.0, np.nan], default=[1.0, np.nan])
    v, why = verdict(t)
    assert v == "non-finite" and "same places" in why


def test_nan_in_custom_beats_default_absent():
    t = tensor(custom=[np.nan, 1.0], absent={"default": "None"})
    assert verdict(t)[0] == "non-finite"


def test_default_nan_where_custom_finite():
    # with numeric: custom on it is a match, the NaN default a note
    v, why = verdict(
        tensor(custom=[0.5, 2.0, 3.0], default=[np.nan, 2.0, 3.0], numeric=[0.5, 2.0, 3.0])
    )
    assert v == "match" and "default is NaN/Inf at 1 of 3 elements" in why
    # without: default judges, and nothing checks custom where default is NaN
    agree = tensor(custom=[0.5, 2.0, 3.0], default=[np.nan, 2.0, 3.0])
    v, why = verdict(agree)
    assert v == "unchecked" and "NaN/Inf at 1 of 3" in why
    disagree = tensor(custom=[0.5, 2.0, 3.0], default=[np.inf, 2.0, 9.0])
    assert verdict(disagree)[0] == "differs"


def test_reversal_differs_with_numbers():
    t = tensor(custom=np.arange(4.0), default=np.arange(4.0)[::-1], numeric=np.arange(4.0)[::-1])
    v, why = verdict(t)
    assert (
        v == "differs" and "custom differs from numeric at 4 of 4 elements, max abs error 3" in why
    )
    assert "3 of them where the derivative is defined and not 0" in why


def test_float32_noise_is_match():
    rng = np.random.default_rng(0)
    d = rng.standard_normal(200)
    t = tensor(custom=d + 1e-7, default=d, numeric=d)
    v, why = verdict(t)
    assert v == "match" and "all 200 elements" in why


def test_float64_noise_of_1e_7_differs_but_1e_12_matches():
    d = np.linspace(-1, 1, 50)
    assert verdict(tensor(dtype="float64", custom=d + 1e-7, default=d))[0] == "differs"
    assert verdict(tensor(dtype="float64", custom=d + 1e-12, default=d))[0] == "match"


def test_op_error_is_error():
    err = ErrorInfo("ValueError", "bad shape", "/u/op.py:12")
    v, why = verdict(tensor(custom=[1.0], default=[1.0]), "error", error=err)
    assert v == "error" and "/u/op.py:12" in why


def test_only_custom_run_compared_with_numeric():
    assert verdict(tensor(custom=[1.0, 2.0], numeric=[1.0, 2.0004]))[0] == "match"
    v, why = verdict(tensor(custom=[1.0, 2.0], numeric=[1.0, 5.0]))
    assert v == "differs" and why.startswith("only custom was run")
    assert verdict(tensor(custom=[1.0, 1.0], numeric=[1.0, 0.0]))[0] == "surrogate"


def test_only_default_run_absent_is_broken():
    assert verdict(tensor(value=[1.0], absent={"default": "None"}))[0] == "broken"


def test_projection_numeric_is_used_for_big_tensors():
    rng = np.random.default_rng(1)
    g = rng.standard_normal(1000)
    v = rng.standard_normal((8, 1000))
    info = NumericInfo("projection", 1e-3, 8, {"numeric": v @ g, "custom": v @ g, "default": v @ g})
    verd, why = verdict(tensor(custom=g, default=g, info=info))
    assert verd == "match" and "agrees with numeric on all 8 random directions" in why
    bad = NumericInfo("projection", 1e-3, 8, {"numeric": v @ g, "custom": v @ (-g)})
    assert verdict(tensor(custom=-g, info=bad))[0] == "differs"


# --- per op and summary ------------------------------------------------------------------------
def test_compare_result_fields_and_summary():
    r = result(
        "round_ste",
        "torch",
        [
            tensor(
                "x",
                custom=np.ones(4),
                default=np.zeros(4),
                numeric=np.zeros(4),
                value=np.arange(4.0),
            ),
            tensor("out", role="output", custom=np.ones(4), default=np.ones(4)),
        ],
    )
    c = compare_result(r)
    assert (c.name, c.framework, c.device, c.status) == ("round_ste", "torch", "cpu", "ok")
    x = c.tensors[0]
    assert x.verdict == "surrogate" and x.shape == (4,) and x.dtype == "float32"
    assert set(x.stats) == {"default", "custom", "numeric"} and x.stats["custom"].l2 == 2.0
    assert set(x.metrics) == {"custom~default", "custom~numeric", "default~numeric"}
    assert x.metrics["default~numeric"].allclose is True
    assert x.tolerance == Tol(1e-4, 1e-5) and x.numeric_method == "full"
    assert c.tensors[1].verdict == "match"
    counts = summary_counts([c])
    assert counts == {
        "match": 1,
        "surrogate": 1,
        "differs": 0,
        "non-finite": 0,
        "broken": 0,
        "error": 0,
        "no-gradient": 0,
        "unchecked": 0,
    }
    assert tuple(counts) == VERDICTS


def test_failed_op_without_tensors_counts_as_error():
    r = result("boom", "tf", [], status="error", error=ErrorInfo("RuntimeError", "x"))
    assert summary_counts([compare_result(r)])["error"] == 1


# --- nothing to check a gradient against: unchecked, never match -----------------------------
KEPT = {"default": "gradviz could not remove the override for the default mode: f still ran"}


@pytest.mark.parametrize(
    "absent, mode_errors, why",
    [
        ({}, {}, "only custom was run"),
        (KEPT, {}, "no default (gradviz could not remove the override"),
        (
            {},
            {"default": ErrorInfo("LookupError", "No gradient defined for Foo")},
            "no default (it raised LookupError: No gradient defined for Foo)",
        ),
    ],
)
def test_custom_alone_without_numeric_is_unchecked(absent, mode_errors, why):
    """A wrong gradient that nothing was compared with must not read as a match."""
    r = result(
        "alone", "torch", [tensor(custom=[1.0, 7.0], absent=absent)], mode_errors=mode_errors
    )
    t = compare_result(r).tensors[0]
    assert t.verdict == "unchecked"
    assert why in t.explanation and "no numeric reference" in t.explanation
    assert summary_counts([compare_result(r)])["unchecked"] == 1


def test_custom_alone_is_judged_by_numeric_where_it_ran():
    ok = result("alone", "torch", [tensor(custom=[2.0, 3.0], numeric=[2.0, 3.0], absent=KEPT)])
    bad = result("alone", "torch", [tensor(custom=[2.0, 7.0], numeric=[2.0, 3.0], absent=KEPT)])
    assert compare_result(ok).tensors[0].verdict == "match"
    assert compare_result(bad).tensors[0].verdict == "differs"


def test_neither_mode_run_is_unchecked_and_a_raising_default_alone_is_an_error():
    none_ran = result("n", "tf", [tensor(numeric=[1.0, 1.0], absent=KEPT)])
    t = compare_result(none_ran).tensors[0]
    assert t.verdict == "unchecked" and "nothing was compared" in t.explanation
    raised = result(
        "n",
        "tf",
        [tensor(numeric=[1.0, 1.0])],
        mode_errors={"default": ErrorInfo("LookupError", "No gradient defined")},
    )
    t = compare_result(raised).tensors[0]
    assert t.verdict == "error" and "the default mode raised: LookupError" in t.explanation


# --- a numeric reference that is NaN/Inf where the gradient is finite judges nothing there ----
def test_a_loss_that_is_nan_everywhere_leaves_no_numeric_reference():
    """A NaN forward output makes every finite difference NaN: custom agreeing with default is
    a match without numeric, custom alone is unchecked; neither differs 'from numeric'."""
    nan = [np.nan] * 3
    both = compare_result(
        result("log", "tf", [tensor(custom=[1.0] * 3, default=[1.0] * 3, numeric=nan)])
    ).tensors[0]
    assert both.verdict == "match"
    assert (
        "no usable numeric reference" in both.explanation
        and "at all 3 elements" in both.explanation
    )
    assert both.metrics["custom~numeric"].n == 0
    assert both.metrics["custom~numeric"].numeric_undefined == 3
    alone = compare_result(result("log", "tf", [tensor(custom=[1.0] * 3, numeric=nan)])).tensors[0]
    assert alone.verdict == "unchecked"


def test_numeric_nan_at_a_domain_edge_is_left_out_and_counted():
    ok = tensor(
        custom=[1.0, 2.0, 3.0, 4.0],
        default=[1.0, 2.0, 3.0, 4.0],
        numeric=[1.0, np.nan, 3.0, np.inf],
    )
    t = compare_result(result("sqrt", "torch", [ok])).tensors[0]
    m = t.metrics["custom~numeric"]
    assert t.verdict == "match" and (m.n, m.n_differ, m.numeric_undefined) == (2, 0, 2)
    assert (
        "on all 2 elements where numeric is finite (it is NaN/Inf at the other 2" in t.explanation
    )
    # a wrong element where numeric is defined still counts, at its own index
    bad = tensor(
        custom=[1.0, 2.0, 3.0, 9.0, 5.0], numeric=[1.0, np.nan, 3.0, 4.0, 5.0], absent=KEPT
    )
    t = compare_result(result("sqrt", "torch", [bad])).tensors[0]
    m = t.metrics["custom~numeric"]
    assert t.verdict == "differs" and (m.n, m.n_differ, m.worst_index) == (4, 1, 3)
    # NaN in the gradient where numeric is NaN too agrees, as before
    same = tensor(custom=[1.0, np.nan], default=[1.0, np.nan], numeric=[1.0, np.nan])
    m = compare_result(result("sqrt", "torch", [same])).tensors[0].metrics["custom~numeric"]
    assert m.allclose and "numeric_undefined" not in m.as_dict()


def test_custom_mode_error_gives_error_verdict():
    r = result(
        "half",
        "torch",
        [tensor(default=[1.0])],
        mode_errors={"custom": ErrorInfo("TypeError", "backward returned 3 values", "/u/h.py:9")},
    )
    t = compare_result(r).tensors[0]
    assert t.verdict == "error" and "/u/h.py:9" in t.explanation
    assert t.stats["custom"].absent is True


# --- parity ------------------------------------------------------------------------------------
def test_parity_none_vs_zeros_is_not_a_match():
    """DESIGN.md: absent is not zero (issue 13 item 8): TF's None against torch's zeros differs."""
    torch_r = result(
        "round_ste",
        "torch",
        [tensor("x", custom=np.ones(3), default=np.zeros(3), value=np.arange(3.0))],
    )
    tf_r = result(
        "round_ste",
        "tf",
        [tensor("x", custom=np.ones(3), absent={"default": "None"}, value=np.arange(3.0))],
    )
    rows = {r.mode: r for r in parity([torch_r, tf_r])}
    assert set(rows) == {"value", "default", "custom"}
    # no error number next to a differs: against zeros it read 0, as if they agreed
    assert rows["default"].verdict == "differs" and rows["default"].max_abs_err is None
    assert rows["default"].note == "tf: no gradient (None), torch: zeros (absent is not zero)"
    assert rows["custom"].verdict == "match" and rows["custom"].max_abs_err == 0.0
    assert rows["value"].verdict == "match"
    # the other way round, and both absent (an input the output does not use): a match
    swapped = {
        r.mode: r
        for r in parity(
            [
                result(
                    "round_ste",
                    "torch",
                    [
                        tensor(
                            "x",
                            custom=np.ones(3),
                            absent={"default": "no path"},
                            value=np.arange(3.0),
                        )
                    ],
                ),
                result(
                    "round_ste",
                    "tf",
                    [tensor("x", custom=np.ones(3), default=np.zeros(3), value=np.arange(3.0))],
                ),
            ]
        )
    }
    assert swapped["default"].verdict == "differs" and swapped["default"].max_abs_err is None
    assert swapped["default"].note.startswith("torch: no gradient (no path), tf: zeros")
    both = {
        r.mode: r
        for r in parity(
            [
                result(
                    "op", "torch", [tensor("x", custom=np.ones(2), absent={"default": "no path"})]
                ),
                result("op", "tf", [tensor("x", custom=np.ones(2), absent={"default": "None"})]),
            ]
        )
    }
    assert both["default"].verdict == "match"


def test_max_rel_err_where_the_reference_is_zero():
    """Issue 13 item 8: a numeric 0 against a gradient of 1 read 1000 (1 / atol); it is 100%."""
    tol = tolerances("float32", numeric=True)
    m = pair_metrics(np.array([1.0, 2.0, 0.0]), np.array([0.0, 2.0, 0.0]), tol)
    assert m.max_rel_err == 1.0 and m.n_differ == 1
    assert pair_metrics(np.array([1.0]), np.array([-1.0]), tol).max_rel_err == 2.0
    # both within the absolute tolerance of zero: no relative error to speak of
    assert pair_metrics(np.array([1e-4, 3.0]), np.array([0.0, 3.0]), tol).max_rel_err == 0.0
    assert pair_metrics(np.zeros(3), np.zeros(3), tol).max_rel_err == 0.0


def test_parity_differs_missing_and_unpaired_ops():
    torch_r = result(
        "op",
        "torch",
        [tensor("x", custom=[1.0, 2.0], numeric=[1.0, 2.0]), tensor("only_torch", custom=[1.0])],
    )
    tf_r = result("op", "tf", [tensor("x", custom=[1.0, 2.5])])
    lone = result("lonely", "torch", [tensor("x", custom=[1.0])])
    rows = parity([torch_r, tf_r, lone])
    assert [(r.op, r.tensor, r.mode, r.verdict) for r in rows] == [
        ("op", "x", "custom", "differs"),
        ("op", "x", "numeric", "missing"),
    ]
    assert rows[0].max_abs_err == 0.5 and "numeric was not run in tf" == rows[1].note


def test_parity_float64_pair_uses_float64_tolerance_float32_otherwise():
    a = result("op", "torch", [tensor("x", dtype="float64", custom=[1.0 + 1e-6])])
    b = result("op", "tf", [tensor("x", dtype="float64", custom=[1.0])])
    assert parity([a, b])[0].verdict == "differs"
    b32 = result("op", "tf", [tensor("x", dtype="float32", custom=[1.0])])
    assert parity([a, b32])[0].verdict == "match"


# --- issue 24: custom judged against numeric, default a witness ------------------------------
def _big(custom, default, directions=8, seed=0):
    """A big tensor judged along random directions: numeric's projections of the true gradient
    `default` (which default then agrees with)."""
    v = np.random.default_rng(seed).standard_normal((directions, custom.size))
    p = {"numeric": v @ default, "custom": v @ custom, "default": v @ default}
    return tensor(
        custom=custom, default=default, info=NumericInfo("projection", 1e-3, directions, p)
    )


def test_big_relu_straight_through_is_surrogate_by_default_agreeing_with_numeric():
    x = np.random.default_rng(1).standard_normal(1000)
    relu_grad = (x > 0).astype(float)
    v, why = verdict(_big(np.ones(1000), relu_grad))
    assert v == "surrogate" and "custom differs from default only where default is 0" in why
    # off where the true derivative is 1: differs
    v, why = verdict(_big(np.where(x > 0, 2.0, 1.0), relu_grad))
    assert v == "differs" and "numeric is not 0 along them" in why


def test_big_tensor_with_a_flat_forward_is_surrogate_along_every_direction():
    t = _big(np.ones(1000), np.zeros(1000))
    v, why = verdict(t)
    assert v == "surrogate" and "numeric is 0 along every one" in why


def test_a_one_element_tensor_has_no_kink_to_spare():
    # before issue 24 a scalar off numeric at its 1 of 1 element read match beside a default
    # that agreed with custom
    v, _ = verdict(tensor(custom=[3.0], default=[3.0], numeric=[1.0]))
    assert v == "differs"


def test_a_kink_needs_default_as_a_second_witness_below_100_elements():
    n = np.linspace(-1, 1, 50)
    c = n.copy()
    c[7] = n[7] + 0.5  # one element off, as at a kink
    assert verdict(tensor(custom=c, default=c, numeric=n))[0] == "match"
    assert verdict(tensor(custom=c, default=n, numeric=n))[0] == "differs"


def test_an_exact_custom_beside_a_wrong_default_is_match_with_a_note():
    g = np.linspace(-1, 1, 200)
    v, why = verdict(tensor(custom=g, default=-g, numeric=g))
    assert v == "match" and "default differs from numeric at 200 of 200 elements" in why
    assert "the default column is unreliable here" in why


def test_a_frozen_parameter_reads_no_gradient():
    t = TensorResult(
        "w",
        "param",
        (3,),
        "float32",
        np.ones(3),
        {},
        {
            "custom": "no gradient: frozen (requires_grad=False)",
            "default": "no gradient: frozen (requires_grad=False)",
        },
        frozen=True,
    )
    v, why = verdict(t)
    assert v == "no-gradient" and "frozen parameter" in why


def test_an_empty_tensor_is_unchecked_whatever_its_modes_say():
    # issue 26: an empty tensor with a wrong backward read match (nothing compared, all agreed)
    t = TensorResult(
        "x",
        "input",
        (0, 3),
        "float32",
        np.zeros((0, 3)),
        {
            "custom": np.zeros((0, 3), np.float32),
            "default": np.zeros((0, 3), np.float32),
            "numeric": np.zeros((0, 3)),
        },
    )
    v, why = verdict(t)
    assert v == "unchecked" and "x is empty (shape (0, 3))" in why
