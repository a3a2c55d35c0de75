"""What a wrong gradient is, read off its numbers against the true ones: the right gradient
negated, transposed or with its axes in another order, another input's gradient, or a broadcast
gradient reduced over other axes than the broadcast ones. numpy only; each function says None
unless the numbers show it element for element (a claim a user can check by hand)."""

from __future__ import annotations

import itertools

import numpy as np

from gradviz.compare.metrics import Tol
from gradviz.diagnostics.cause_reference import close, varied

MAX_NDIM = 5  # axis orders tried: at most 5! = 120, subsets of axes: 31


def factor(c: np.ndarray, d: np.ndarray, tol: Tol) -> float | None:
    """k where c = k * d at every element (c ~ 0 where d ~ 0), k not 1; None otherwise."""
    c = np.asarray(c, dtype=np.float64).reshape(-1)
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    if c.size != d.size:
        return None
    atol = tol.atol_for(d)
    nz = np.abs(d) > atol
    if nz.sum() < 2:
        return None
    ratio = c[nz] / d[nz]
    k = float(np.median(ratio))
    if not (np.allclose(ratio, k, rtol=1e-3, atol=1e-6) and np.allclose(c[~nz], 0, atol=atol)):
        return None
    return None if abs(k - 1.0) <= 1e-3 else k


def permuted(c: np.ndarray, truth: np.ndarray, tol: Tol) -> tuple[int, ...] | None:
    """The axis order p (not the identity) for which the custom gradient, read in flat order,
    is truth.transpose(p): a 2-D gradient returned transposed ((1, 0), square or reshaped back),
    or a permute with the axes in the wrong order. None unless custom differs from the truth."""
    truth = np.asarray(truth, dtype=np.float64)
    if not 2 <= truth.ndim <= MAX_NDIM or np.size(c) != truth.size:
        return None
    if close(c, truth, tol) or not varied(truth, tol):
        return None
    for p in itertools.permutations(range(truth.ndim)):
        if p != tuple(range(truth.ndim)) and close(c, truth.transpose(p), tol):
            return p
    return None


def belongs_to(c: np.ndarray, own: np.ndarray, other: np.ndarray, tol: Tol) -> bool:
    """The custom gradient is another tensor's true gradient (`other`, of a tensor of the same
    shape as its own), not its own."""
    if np.shape(own) != np.shape(other) or np.size(c) != np.size(other) or close(c, own, tol):
        return False
    return varied(other, tol) and not close(own, other, tol) and close(c, other, tol)


def reduced_wrong(
    c: np.ndarray, truth: np.ndarray, full: np.ndarray, tol: Tol
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(axes custom was summed over, axes it should have been) where `full` is the unreduced
    gradient of a broadcast tensor: its sum over some axes is the truth, and the custom gradient
    is its sum over others (or `full` itself, not summed at all: axes ()). None otherwise."""
    full = np.asarray(full, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    if (
        full.ndim > MAX_NDIM
        or full.size <= truth.size
        or close(c, truth, tol)
        or not varied(truth, tol)
    ):
        return None
    subsets = [
        s for r in range(1, full.ndim + 1) for s in itertools.combinations(range(full.ndim), r)
    ]
    right = [
        s for s in subsets if _kept(full, s) == truth.size and close(full.sum(axis=s), truth, tol)
    ]
    if not right:
        return None
    if np.size(c) == full.size and close(c, full, tol):
        return (), right[0]
    for s in subsets:
        if s not in right and _kept(full, s) == np.size(c) and close(c, full.sum(axis=s), tol):
            return s, right[0]
    return None


def _kept(full: np.ndarray, axes: tuple[int, ...]) -> int:
    return int(np.prod([n for i, n in enumerate(full.shape) if i not in axes], dtype=np.int64))
