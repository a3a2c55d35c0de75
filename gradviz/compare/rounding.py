"""Which narrower float format an array's values fit exactly: a gradient computed in bfloat16
and cast back keeps bfloat16's rounding in every element (its low 16 bits are zero), which is
how a gradient's precision can be read off its numbers after a framework cast its dtype away.

numpy only. `NARROWER` lists the formats from the narrowest; `bits` is each one's significand
precision (the implicit bit included), so rounding to nearest is off by at most 2**-bits
relative."""

from __future__ import annotations

import numpy as np

NARROWER = ("bfloat16", "float16", "float32")
BITS = {"bfloat16": 8, "float16": 11, "float32": 24, "float64": 53}


def exact_in(values: np.ndarray, fmt: str) -> np.ndarray:
    """Per element: is this finite value exactly a number of format `fmt`? (NaN/Inf: False.)"""
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    finite = np.isfinite(a)
    with np.errstate(over="ignore", invalid="ignore"):
        as32 = a.astype(np.float32)
        fits32 = finite & (as32.astype(np.float64) == a)
        if fmt == "float32":
            return fits32
        if fmt == "bfloat16":
            return fits32 & ((as32.view(np.uint32) & np.uint32(0xFFFF)) == 0)
        if fmt == "float16":
            return finite & (a.astype(np.float16).astype(np.float64) == a)
    raise ValueError(f"unknown format {fmt!r}")


def narrowest(values: np.ndarray, wider_than: str = "float32") -> str | None:
    """The narrowest format of NARROWER, narrower than `wider_than`, that holds every finite
    value of `values` exactly; None where none does or there is no finite value."""
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return None
    for fmt in NARROWER:
        if BITS[fmt] >= BITS.get(wider_than, 24):
            return None
        if exact_in(a, fmt).all():
            return fmt
    return None


def looks_rounded(values: np.ndarray, reference: np.ndarray, fmt: str, minimum: int = 8) -> bool:
    """`values` hold `fmt`'s rounding where `reference` (the true gradient) does not: every
    finite value is exactly a `fmt` number, and at least `minimum` of them are distinct, while
    at least `minimum` elements, and most of those that are not 0, of the reference are not.
    A gradient of a few simple numbers (3.0 everywhere, 0.5, 0) fits every format and shows
    nothing, whatever a finite-difference reference's noise makes of it."""
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    r = np.asarray(reference, dtype=np.float64).reshape(-1)
    fin = a[np.isfinite(a)]
    if a.size != r.size or not exact_in(fin, fmt).all() or np.unique(fin).size < minimum:
        return False
    live = np.isfinite(r) & (r != 0)
    inexact = live & ~exact_in(r, fmt)
    n = int(inexact.sum())
    return n >= minimum and n * 2 > int(live.sum())
