"""Each mode against the numeric reference, in numbers and in words (numpy only).

The numeric reference is the truth the verdicts judge by (DESIGN.md "Verdicts"): float64 central
differences, of every element of a small tensor, or along random directions of a big one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeGuard

import numpy as np

from gradviz.compare.metrics import Tol, close_mask, fmt, pair_metrics, tolerances
from gradviz.compare.numbers import PairMetrics
from gradviz.model import TensorResult
from gradviz.vocab import Mode

# custom vs default under a second, random upstream (TensorResult.probe)
PROBE = "custom~default, random upstream"

# Elements at which a gradient may differ from numeric and still agree with it: the finite
# difference straddled a kink (relu at 0, a clamp's edge), where numeric is neither one-sided
# derivative. verdict_rules.kink_allowance says how many, and when.
KINK_FRACTION = 0.01


def numeric_defined(g, n) -> np.ndarray:
    """Per element (flat): can numeric judge `g` there? Not where the finite difference is
    NaN/Inf and `g` is finite: the loss is not finite at or next to that point (a NaN forward
    output, a log's or sqrt's domain edge straddled), so there is no reference there, not a
    reference that the gradient misses. NaN in both still counts as agreeing (close_mask)."""
    g = np.asarray(g, dtype=np.float64).reshape(-1)
    n = np.asarray(n, dtype=np.float64).reshape(-1)
    return np.isfinite(n) | ~np.isfinite(g)


def apart_from_numeric(got, ref, tol: Tol) -> tuple:
    """(got, ref flat in float64, where numeric is defined, the absolute tolerance, where the
    two are apart there): a gradient against numeric element by element, as the verdicts and
    the precision check compare them."""
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    defined = numeric_defined(got, ref)
    atol = tol.atol_for(ref[defined]) if defined.any() else tol.atol
    return got, ref, defined, atol, ~close_mask(got, ref, tol, atol) & defined


def vs_numeric(t: TensorResult, mode: str) -> PairMetrics | None:
    """pair_metrics of `mode`'s gradient against numeric, with its method ("full" | "projection");
    None where either is missing."""
    g = t.grads.get(mode)
    if g is None:
        return None
    tol = tolerances(t.dtype, numeric=True)
    if t.grads.get(Mode.NUMERIC) is not None:
        return _against_numeric(g, t.grads[Mode.NUMERIC], tol, "full")
    p = t.numeric.projections if t.numeric is not None else {}
    if (
        t.numeric is not None
        and t.numeric.method == "projection"
        and mode in p
        and Mode.NUMERIC in p
    ):
        return _against_numeric(p[mode], p[Mode.NUMERIC], tol, "projection")
    return None


def _against_numeric(g, n, tol: Tol, method: str) -> PairMetrics:
    """pair_metrics of `g` against numeric over the elements numeric is defined at; the others
    are counted as numeric_undefined (n is what was compared: 0 when nothing was)."""
    n_flat = np.asarray(n, dtype=np.float64).reshape(-1)
    if np.size(g) != n_flat.size or np.isfinite(n_flat).all():
        return replace(pair_metrics(g, n, tol), method=method)
    keep = numeric_defined(g, n_flat)
    k = int(keep.size - np.count_nonzero(keep))
    if k == 0:
        return replace(pair_metrics(g, n, tol), method=method)
    if k == keep.size:
        return PairMetrics(0, 0, True, rtol=tol.rtol, method=method, numeric_undefined=k)
    m = pair_metrics(np.asarray(g, dtype=np.float64).reshape(-1)[keep], n_flat[keep], tol)
    worst = int(np.flatnonzero(keep)[m.worst_index]) if m.worst_index is not None else None
    return replace(m, worst_index=worst, method=method, numeric_undefined=k)


def tensor_metrics(t: TensorResult, known: dict | None = None) -> dict:
    """Pair metrics between the modes present; the second name is the reference. `known`:
    metrics already worked out from these very arrays (verdicts._known)."""
    out = {}
    c, d = t.grads.get(Mode.CUSTOM), t.grads.get(Mode.DEFAULT)
    if known and "custom~default" in known:
        out["custom~default"] = known["custom~default"]
    elif c is not None and d is not None:
        out["custom~default"] = pair_metrics(c, d, tolerances(t.dtype))
    for mode in (Mode.CUSTOM, Mode.DEFAULT):
        m = vs_numeric(t, mode)
        if m is not None:
            out[f"{mode}~numeric"] = m
    if t.probe is not None:
        out[PROBE] = PairMetrics.from_dict(t.probe)  # the worker sends it as plain data
    return out


def checked_by_numeric(m: PairMetrics | None) -> TypeGuard[PairMetrics]:
    """Numeric judged something: it ran, and was finite somewhere the gradient is."""
    return m is not None and m.n > 0


def err_text(m: PairMetrics) -> str:
    return f"max abs error {fmt(m.max_abs_err)} (tolerance {fmt(m.atol)} abs + {m.rtol:g} rel)"


def numeric_clause(metrics: dict, mode: str) -> str:
    """How `mode` stands to numeric, in one clause with its numbers."""
    m = metrics.get(f"{mode}~numeric")
    if m is None:
        return f"no numeric reference to check {mode} against"
    unit = "random directions" if m.method == "projection" else "elements"
    if m.shape_mismatch:
        return f"{mode} and numeric differ in shape ({m.shape_mismatch}): not compared"
    k = m.numeric_undefined or 0
    if m.n == 0:
        at = "along" if m.method == "projection" else "at"
        return (
            f"no usable numeric reference to check {mode} against: numeric is NaN/Inf {at} "
            f"all {k} {unit} where {mode} is finite (the loss is not finite at or next to "
            "these inputs)"
        )
    where = (
        f" where numeric is finite (it is NaN/Inf at the other {k}, next to inputs where "
        "the loss is not finite)"
        if k
        else ""
    )
    if m.allclose:
        return f"{mode} agrees with numeric on all {m.n} {unit}{where}, {err_text(m)}"
    return f"{mode} differs from numeric at {m.n_differ} of {m.n} {unit}{where}, {err_text(m)}"
