"""The true gradient a cause is read against: numeric where the run has it for every element
(the derivative of the forward itself), else default (the framework's own autodiff), and which
one it was, so that a finding can say what its numbers rest on."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gradviz.compare.metrics import Tol, close_mask, tolerances


@dataclass(frozen=True)
class Reference:
    values: np.ndarray  # float64, the tensor's shape
    mode: str  # "numeric" | "default" | "default+numeric" (they agree: default's
    tol: Tol  # custom vs this reference           float32-exact numbers are used)
    defined: np.ndarray  # flat bool: elements the reference can judge (numeric not NaN/Inf)

    def words(self, of: str = "") -> str:
        """ "the true gradient of 'w' (default and numeric agree on it)", with `of` " of 'w'"."""
        return {
            "numeric": f"the numeric (finite-difference) gradient{of}",
            "default": f"the default gradient{of} (there is no numeric one)",
            "default+numeric": f"the true gradient{of} (default and numeric agree on it)",
        }[self.mode]


def reference_of(t, metrics: dict | None = None) -> Reference | None:
    """Numeric where it is finite at every element (default's own numbers where the two agree:
    they carry no finite-difference noise); else default where it is finite; else numeric over
    the elements where it is defined (at least 90 %); None when neither is there."""
    shape = tuple(t.value.shape) if t.value is not None else tuple(t.shape)
    size = int(np.prod(shape, dtype=np.int64))
    n, d = (_as(t.grads.get(m), shape, size) for m in ("numeric", "default"))
    dn = (metrics or {}).get("default~numeric")
    agree = dn is not None and dn.allclose
    if n is not None and d is not None and agree and np.isfinite(d).all():
        return Reference(d, "default+numeric", tolerances(t.dtype), _all(size))
    if n is not None and np.isfinite(n).all():
        return Reference(n, "numeric", tolerances(t.dtype, numeric=True), _all(size))
    if d is not None and np.isfinite(d).all():
        return Reference(d, "default", tolerances(t.dtype), _all(size))
    if n is not None and np.isfinite(n).mean() >= 0.9:
        return Reference(
            n, "numeric", tolerances(t.dtype, numeric=True), np.isfinite(n).reshape(-1)
        )
    return None


def _as(g, shape, size) -> np.ndarray | None:
    if g is None or np.size(g) != size or size == 0:
        return None
    return np.asarray(g, dtype=np.float64).reshape(shape)


def _all(size: int) -> np.ndarray:
    return np.ones(size, dtype=bool)


def close(a: np.ndarray, b: np.ndarray, tol: Tol, keep: np.ndarray | None = None) -> bool:
    """Every element of `a` agrees with the reference `b` (flat order; sizes must match), over
    `keep` where given."""
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    if a.size != b.size or a.size == 0:
        return False
    if keep is not None and keep.size == a.size and not keep.all():
        a, b = a[keep], b[keep]
    return bool(np.all(close_mask(a, b, tol)))


def varied(b: np.ndarray, tol: Tol) -> bool:
    """The reference is not one number throughout (nor all ~0): only then can a reordering or
    another input's gradient be told from it."""
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    b = b[np.isfinite(b)]
    return b.size >= 2 and float(np.ptp(b)) > 10 * tol.atol_for(b)
