"""Tick positions and number labels, shared by the window's axes and the exported figures, so a
value reads the same in both ("2e5", not "200000" squeezed against "400000")."""

from __future__ import annotations

import math


def nice_ticks(lo: float, hi: float, target: int = 5, integer: bool = False) -> list[float]:
    """About `target` round values in [lo, hi]; `integer`: whole numbers only (cell indices)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return []
    raw = (hi - lo) / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    if integer:
        step = max(1.0, float(round(step)))
    start = math.ceil(lo / step) * step
    ticks, v = [], start
    while v <= hi + step * 1e-9:
        ticks.append(0.0 if abs(v) < step * 1e-9 else v)
        v += step
    return ticks


def fmt(v: float) -> str:
    """Short: 4 significant digits, exponent form from 1e4 up and below 1e-3 ("2e4", never
    Python's "2e+04", whose labels ran together on a 40,000-element axis)."""
    a = abs(v)
    if a != 0 and (a >= 1e4 or a < 1e-3):
        m, e = f"{v:.3g}".split("e") if "e" in f"{v:.3g}" else (f"{v:.3g}", None)
        if e is None:
            m, e = f"{v:.2e}".split("e")
        return f"{float(m):g}e{int(e)}"
    return f"{v:.4g}"
