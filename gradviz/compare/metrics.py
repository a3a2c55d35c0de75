"""Numbers about gradients: tolerances, per-mode statistics, and how close two gradients are.

numpy only. Statistics are a ModeStats, closeness a PairMetrics (compare/numbers.py), of plain
Python values; compare/verdicts.py builds verdicts on these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gradviz.compare.numbers import ModeStats, PairMetrics


@dataclass(frozen=True)
class Tol:
    """a ≈ b where |a - b| <= atol * max(1, max|b|) + rtol * |b|   (b is the reference).

    The absolute part scales with the reference's magnitude so that a gradient of size 1e4 is not
    held to the absolute tolerance meant for values near 1.
    """

    rtol: float
    atol: float

    def atol_for(self, ref: np.ndarray) -> float:
        fin = np.isfinite(ref)
        finite = ref if fin.all() else ref[fin]  # no copy in the common, all-finite case
        peak = float(np.abs(finite).max()) if finite.size else 0.0
        return self.atol * max(1.0, peak)

    def as_dict(self) -> dict:
        return {"rtol": self.rtol, "atol": self.atol}

    def __str__(self) -> str:
        return f"rtol {self.rtol:g}, atol {self.atol:g}"


# custom vs default: both are analytic gradients of the same forward in the same precision, so
# they may differ only by rounding of a different order of operations (a few ulps, summed).
_ANALYTIC = {"float32": Tol(rtol=1e-4, atol=1e-5), "float64": Tol(rtol=1e-7, atol=1e-9)}
# against numeric: central differences carry truncation error (~eps^2 * f''') and rounding error
# (~ulp(f) / eps); for a float32 forward the rounding term dominates at ~1e-3 of the gradient.
_NUMERIC = {"float32": Tol(rtol=2e-3, atol=1e-3), "float64": Tol(rtol=1e-5, atol=1e-6)}


def tolerances(dtype: str, numeric: bool = False) -> Tol:
    """Tolerance for comparing two gradients of tensors of `dtype` (unknown dtypes: float32's).
    `numeric=True`: one side is the finite-difference reference, which is less exact."""
    table = _NUMERIC if numeric else _ANALYTIC
    return table.get(str(dtype), table["float32"])


def mode_stats(arr: np.ndarray | None, reason: str = "") -> ModeStats:
    """Summary of one gradient. NaN/Inf are counted, and left out of min/max/mean/std/l2."""
    if arr is None:
        return ModeStats.missing(reason)
    a = np.asarray(arr, dtype=np.float64).reshape(-1)
    finite = np.isfinite(a)
    if finite.all():  # the common case: nothing to count or leave out, no copy
        nan = inf = 0
        fin = a
    else:
        nan = int(np.isnan(a).sum())
        inf = int(np.isinf(a).sum())
        fin = a[finite]
    counts: dict[str, Any] = {
        "n": int(a.size),
        "nan": nan,
        "inf": inf,
        "zeros": int((a == 0).sum()),
    }
    if not fin.size:
        return ModeStats(**counts)
    return ModeStats(
        **counts,
        min=float(fin.min()),
        max=float(fin.max()),
        mean=float(fin.mean()),
        std=float(fin.std()),
        l2=float(np.sqrt(np.sum(fin * fin))),
        abs_max=float(np.abs(fin).max()),
    )


def same_nonfinite(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elements where both are NaN, or both the same infinity: these count as equal."""
    return (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))


def close_mask(
    a: np.ndarray, b: np.ndarray, tol: Tol, atol: float | None = None, all_finite: bool = False
) -> np.ndarray:
    """Per element: does a agree with the reference b? NaN-aware (see same_nonfinite).
    `atol` (tol.atol_for(b)) and `all_finite` (no NaN/Inf in either): known already."""
    atol = tol.atol_for(b) if atol is None else atol
    with np.errstate(invalid="ignore"):
        ok = np.abs(a - b) <= atol + tol.rtol * np.abs(b)
    if all_finite:
        return ok
    # An infinite reference makes the bound above infinite: a finite value, or the other
    # infinity, would count as close to it. Only the same non-finite value is.
    return (ok & np.isfinite(a) & np.isfinite(b)) | same_nonfinite(a, b)


def pair_metrics(a: np.ndarray, b: np.ndarray, tol: Tol) -> PairMetrics:
    """How close gradient `a` is to the reference `b`.

    max_abs_err / max_rel_err / cosine / norm_ratio are taken over elements finite in both;
    n_differ counts every element that is not close (a NaN in one only counts as differing).
    max_rel_err is |a-b| / max(|a|, |b|) per element, over the elements where either side is
    above the absolute tolerance (both at zero within it: no relative error to speak of). It is
    at most 2 (opposite signs) and exactly 1 where one side is 0 and the other is not: a numeric
    reference of 0 no longer turns a gradient of 1 into an "error" of 1/atol.
    cosine and norm_ratio are None where undefined (one side all zeros).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        if a.size != b.size:
            return PairMetrics(
                int(b.size),
                int(max(a.size, b.size)),
                False,
                rtol=tol.rtol,
                shape_mismatch=f"{tuple(a.shape)} vs {tuple(b.shape)}",
            )
        a = a.reshape(b.shape)
    a, b = a.reshape(-1), b.reshape(-1)
    # 10^6-element gradients are compared on the window's threads: in the common case (all
    # finite) the masks and copies that leave out NaN/Inf are skipped; the numbers are the same.
    if np.isfinite(a).all() and np.isfinite(b).all():
        return _finite_pair_metrics(a, b, tol)
    both = np.isfinite(a) & np.isfinite(b)
    all_finite = bool(both.all())
    atol = tol.atol_for(b)
    ok = close_mask(a, b, tol, atol, all_finite)
    fa, fb = (a, b) if all_finite else (a[both], b[both])
    err = np.abs(fa - fb)
    max_abs = float(err.max()) if err.size else 0.0
    worst = None
    if err.size and max_abs > 0:
        i = int(err.argmax())
        worst = i if all_finite else int(np.flatnonzero(both)[i])
    scale = np.maximum(np.abs(fa), np.abs(fb))
    live = scale > atol
    rel = err[live] / scale[live]
    na, nb = float(np.sqrt(np.sum(fa * fa))), float(np.sqrt(np.sum(fb * fb)))
    cosine: float | None
    ratio: float | None
    if na == 0.0 and nb == 0.0:
        cosine, ratio = 1.0, 1.0
    elif na == 0.0 or nb == 0.0:
        cosine, ratio = None, (0.0 if na == 0.0 else None)
    else:
        cosine = float(np.clip(np.dot(fa, fb) / (na * nb), -1.0, 1.0))
        ratio = na / nb
    n_differ = int((~ok).sum())
    return PairMetrics(
        int(b.size),
        n_differ,
        n_differ == 0,
        max_abs,
        float(rel.max()) if rel.size else 0.0,
        cosine,
        ratio,
        worst,
        atol,
        tol.rtol,
    )


def _finite_pair_metrics(a: np.ndarray, b: np.ndarray, tol: Tol) -> PairMetrics:
    """pair_metrics of two flat float64 arrays without NaN/Inf: the same numbers as the masked
    code, each temporary array made once and reused (each fresh 8 MB array of a 10^6-element
    gradient is memory to touch), and for bitwise-equal arrays (custom as autograd computes it)
    no difference taken at all."""
    n = int(b.size)
    abs_b = np.abs(b)
    atol = tol.atol * max(1.0, float(abs_b.max()) if n else 0.0)  # tol.atol_for(b)
    out: dict[str, Any] = {
        "n": n,
        "n_differ": 0,
        "allclose": True,
        "max_abs_err": 0.0,
        "max_rel_err": 0.0,
        "cosine": None,
        "norm_ratio": None,
        "worst_index": None,
        "atol": atol,
        "rtol": tol.rtol,
    }
    work = np.empty_like(b)
    if not np.array_equal(a, b):
        err = np.subtract(a, b)
        np.abs(err, out=err)
        np.multiply(abs_b, tol.rtol, out=work)
        np.add(atol, work, out=work)  # atol + rtol * |b|, as close_mask
        n_differ = n - int(np.count_nonzero(err <= work))
        max_abs = float(err.max()) if n else 0.0
        np.abs(a, out=work)
        np.maximum(work, abs_b, out=work)  # max(|a|, |b|)
        live = work > atol
        np.divide(err, work, out=abs_b, where=live)  # |a - b| / max(|a|, |b|) where it counts
        abs_b[~live] = 0.0
        out.update(
            n_differ=n_differ,
            allclose=n_differ == 0,
            max_abs_err=max_abs,
            max_rel_err=float(abs_b.max()) if n else 0.0,
            worst_index=int(err.argmax()) if max_abs > 0 else None,
        )
    na = float(np.sqrt(np.sum(np.multiply(a, a, out=work))))
    nb = float(np.sqrt(np.sum(np.multiply(b, b, out=work))))
    if na == 0.0 and nb == 0.0:
        out.update(cosine=1.0, norm_ratio=1.0)
    elif na == 0.0 or nb == 0.0:
        out.update(norm_ratio=0.0 if na == 0.0 else None)
    else:
        out.update(cosine=float(np.clip(np.dot(a, b) / (na * nb), -1.0, 1.0)), norm_ratio=na / nb)
    return PairMetrics(**out)


def fmt(x) -> str:
    """A number as it reads in an explanation: 3 significant digits."""
    return "n/a" if x is None else f"{x:.3g}"
