"""Adversarial checks of issue 15's speed changes (compare's all-finite fast path, TF's shared
buffers, leaf_array without a copy, the kept quick pass): odd third-party ops and odd arrays must
get exactly the gradients and verdicts the slow paths gave, and the app's two passes exactly what
`gradviz run`'s one pass gives."""

import numpy as np
import pytest

from gradviz.compare.metrics import Tol, mode_stats, pair_metrics
from gradviz.model import RunRequest, RunSettings

TOL = Tol(rtol=1e-5, atol=1e-6)


# --- compare: the all-finite fast path (d79abbe) -----------------------------------------------
def _masked_pair_metrics(a, b, tol):
    """pair_metrics with every NaN/Inf mask and copy taken (as before the fast path, with an
    infinite reference no longer taken as close to a finite value or the other infinity)."""
    a, b = np.asarray(a, dtype=np.float64).reshape(-1), np.asarray(b, dtype=np.float64).reshape(-1)
    fin_b = b[np.isfinite(b)]
    atol = tol.atol * max(1.0, float(np.abs(fin_b).max()) if fin_b.size else 0.0)
    with np.errstate(invalid="ignore"):
        ok = np.abs(a - b) <= atol + tol.rtol * np.abs(b)
    both = np.isfinite(a) & np.isfinite(b)
    ok = (ok & both) | (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))
    fa, fb = a[both], b[both]
    err = np.abs(fa - fb)
    max_abs = float(err.max()) if err.size else 0.0
    worst = int(np.flatnonzero(both)[int(err.argmax())]) if err.size and max_abs > 0 else None
    scale = np.maximum(np.abs(fa), np.abs(fb))
    rel = err[scale > atol] / scale[scale > atol]
    na, nb = float(np.sqrt(np.sum(fa * fa))), float(np.sqrt(np.sum(fb * fb)))
    if na == 0.0 and nb == 0.0:
        cosine, ratio = 1.0, 1.0
    elif na == 0.0 or nb == 0.0:
        cosine, ratio = None, (0.0 if na == 0.0 else None)
    else:
        cosine, ratio = float(np.clip(np.dot(fa, fb) / (na * nb), -1.0, 1.0)), na / nb
    n_differ = int((~ok).sum())
    return {"n": int(b.size), "n_differ": n_differ, "allclose": n_differ == 0,
            "max_abs_err": max_abs, "max_rel_err": float(rel.max()) if rel.size else 0.0,
            "cosine": cosine, "norm_ratio": ratio, "worst_index": worst, "atol": atol,
            "rtol": tol.rtol}


def _same(x, y) -> bool:
    return x == y or (isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y))


_R = np.random.default_rng(3).standard_normal(1000)
PAIRS = {
    "nan in the gradient only": (np.where(np.arange(1000) == 17, np.nan, _R), _R),
    "nan in the reference only": (_R, np.where(np.arange(1000) == 17, np.nan, _R)),
    "inf in one, nan in the other": (np.where(np.arange(1000) == 5, np.inf, _R),
                                     np.where(np.arange(1000) == 5, np.nan, _R)),
    "opposite infinities": (np.array([np.inf, 1.0]), np.array([-np.inf, 1.0])),
    "the worst element after a nan": (np.array([np.nan, 1.0, 2.0, 9.0]),
                                      np.array([np.nan, 1.0, 2.0, 3.0])),
    "-0.0 against 0.0": (np.array([-0.0, 0.0, -0.0]), np.array([0.0, -0.0, 0.0])),
    "subnormals": (np.array([5e-324, 1e-310, 0.0]), np.array([0.0, 2e-310, 5e-324])),
    "overflowing difference": (np.array([1e308, 1.0]), np.array([-1e308, 1.0])),
    "empty": (np.zeros(0), np.zeros(0)),
    "int arrays": (np.array([1, 2, 3], dtype=np.int64), np.array([1, 2, 4], dtype=np.int32)),
    "float32 against float64": (_R.astype(np.float32), _R),
    "transposed gradient": (np.arange(12.0).reshape(3, 4).T, np.arange(12.0).reshape(3, 4).T.copy()),
    "same size, other shape": (np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)),
}


@pytest.mark.parametrize("case", sorted(PAIRS))
def test_pair_metrics_fast_path_gives_what_the_masked_code_gave(case):
    a, b = PAIRS[case]
    got, want = pair_metrics(a, b, TOL), _masked_pair_metrics(a, b, TOL)
    assert got.keys() == want.keys()
    assert all(_same(got[k], want[k]) for k in got), (got, want)


def test_pair_metrics_odd_arrays_exact_values():
    nan_one = pair_metrics(*PAIRS["nan in the gradient only"], TOL)
    assert (nan_one["n_differ"], nan_one["allclose"], nan_one["max_abs_err"]) == (1, False, 0.0)
    worst = pair_metrics(*PAIRS["the worst element after a nan"], TOL)
    assert (worst["worst_index"], worst["max_abs_err"], worst["n_differ"]) == (3, 6.0, 1)
    zeros = pair_metrics(*PAIRS["-0.0 against 0.0"], TOL)
    assert (zeros["allclose"], zeros["cosine"], zeros["norm_ratio"]) == (True, 1.0, 1.0)
    # an Inf reference made the bound infinite: +Inf was "close" to -Inf, and 1.0 to Inf
    inf = pair_metrics(*PAIRS["opposite infinities"], TOL)
    assert (inf["n_differ"], inf["allclose"]) == (1, False)
    finite_vs_inf = pair_metrics(np.array([1.0, 2.0]), np.array([np.inf, 2.0]), TOL)
    assert (finite_vs_inf["n_differ"], finite_vs_inf["allclose"]) == (1, False)
    same_inf = pair_metrics(np.array([np.inf, np.nan]), np.array([np.inf, np.nan]), TOL)
    assert (same_inf["n_differ"], same_inf["allclose"]) == (0, True)
    assert pair_metrics(np.zeros(3), np.zeros(4), TOL)["shape_mismatch"] == "(3,) vs (4,)"
    empty = pair_metrics(np.zeros(0), np.zeros(0), TOL)
    assert (empty["n"], empty["n_differ"], empty["worst_index"], empty["atol"]) == (0, 0, None, 1e-6)


def test_mode_stats_counts_and_leaves_out_nonfinite_values():
    s = mode_stats(np.array([np.nan, -np.inf, -0.0, 2.0, 4.0]))
    assert (s["n"], s["nan"], s["inf"], s["zeros"]) == (5, 1, 1, 1)
    assert (s["min"], s["max"], s["mean"], s["abs_max"], s["l2"]) == (-0.0, 4.0, 2.0, 4.0,
                                                                       float(np.sqrt(20.0)))
    e = mode_stats(np.zeros(0))
    assert (e["n"], e["nan"], e["min"], e["l2"]) == (0, 0, None, None)
    assert TOL.atol_for(np.array([np.inf, -3.0, np.nan])) == 3e-6   # peak over finite only
    assert TOL.atol_for(np.array([np.nan])) == 1e-6


# --- parity: an Inf in one framework only is no match ------------------------------------------
INF_TORCH = """
    import torch
    import gradviz

    @gradviz.op(name="inf_in_tf")
    class InfInTf(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0
"""
INF_TF = """
    import tensorflow as tf
    import gradviz

    @gradviz.op(name="inf_in_tf")
    @tf.custom_gradient
    def inf_in_tf(x):
        def grad(g):   # the first element's gradient overflows in this framework only
            first = tf.range(tf.size(x)) == 0
            return g * tf.where(first, tf.constant(float("inf"), g.dtype), tf.constant(2.0, g.dtype))
        return x * 2.0, grad
"""


def test_parity_says_differs_where_one_framework_gives_inf(engine, write_module):
    from gradviz.compare import parity
    settings = RunSettings(shape=(8,), modes=("custom", "default"), timeout=300)
    results = engine.run([RunRequest(write_module("inf_torch.py", INF_TORCH), "InfInTf", "torch",
                                     settings),
                          RunRequest(write_module("inf_tf.py", INF_TF), "inf_in_tf", "tf",
                                     settings)])
    assert [r.status for r in results] == ["ok", "ok"], [r.error for r in results]
    torch_x, tf_x = results[0].tensor("x"), results[1].tensor("x")
    np.testing.assert_array_equal(torch_x.grads["custom"], np.full(8, 2.0))
    assert np.isposinf(tf_x.grads["custom"][0]) and np.all(tf_x.grads["custom"][1:] == 2.0)
    rows = {(r.tensor, r.mode): r for r in parity(results)}
    assert rows[("x", "custom")].verdict == "differs"
    assert "differs at 1 of 8 elements" in rows[("x", "custom")].note
    assert rows[("x", "default")].verdict == "match"
    assert rows[("x", "value")].verdict == "match"
