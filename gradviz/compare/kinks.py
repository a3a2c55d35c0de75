"""Which elements off numeric a kink can explain. A finite difference that straddles a kink
(relu's, abs's, a clip's) reads neither side's slope, so an autodiff gradient, custom or
default, is off numeric there; the verdicts allow 1 in 100 such elements. Where default is
there and agrees with numeric at an element custom is off at, nothing was straddled: default's
autodiff of the same forward would be off as well. That element is custom's own error (an
off-by-one that skips the last element, one entry scaled twice), not a kink. An element where
numeric is exactly 0 is left to the surrogate story (abs at an exact 0 reads 0 in both
numeric and default, and any subgradient custom picks there is right), and so is an input
element the user placed (a value of at most 3 decimals, as explicit inputs are and random
draws are not): a tie of max(x, y) reads 0.5 in numeric and in torch's default, and custom may
give it all to x."""

from __future__ import annotations

import numpy as np

from gradviz.compare.metrics import close_mask, tolerances
from gradviz.model import TensorResult
from gradviz.vocab import Mode


def witnessed(t: TensorResult, off: np.ndarray, numeric: np.ndarray) -> np.ndarray:
    """Of custom's `off` elements (flat mask), those at which default, finite, agrees with
    numeric (not 0 there): no kink, a second witness against custom."""
    d = t.grads.get(Mode.DEFAULT)
    if d is None or np.size(d) != off.size or not off.any():
        return np.zeros_like(off)
    value = t.value if t.role == "input" else None
    return off & no_kink(d, numeric, t.dtype, value)


def no_kink(default, numeric, dtype: str, value=None) -> np.ndarray:
    """Per element (flat): default, finite, agrees with numeric, not 0 there, at an input
    `value` (where given) no user placed."""
    d = np.asarray(default, dtype=np.float64).reshape(-1)
    n = np.asarray(numeric, dtype=np.float64).reshape(-1)
    agree = close_mask(d, n, tolerances(dtype, numeric=True)) & np.isfinite(d)
    out = agree & (n != 0)
    if value is not None and np.size(value) == out.size:
        x = np.asarray(value, dtype=np.float64).reshape(-1)
        placed = np.abs(x - np.round(x, 3)) <= 4 * np.finfo(np.float32).eps * np.abs(x)
        out &= ~placed
    return out
