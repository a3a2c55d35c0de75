"""Custom judged against default, where numeric is unavailable (DESIGN.md "Verdicts": a random
forward, a forward below float64, a numeric pass cancelled, failed or not asked for). The
explanation always says so and why: this verdict rests on the framework's answer, not the truth.
"""

from __future__ import annotations

import numpy as np

from gradviz.compare.metrics import close_mask, pair_metrics, tolerances
from gradviz.compare.numeric_metrics import PROBE, err_text, numeric_clause
from gradviz.model import TensorResult
from gradviz.vocab import Mode


def no_numeric_why(t: TensorResult, metrics: dict, mode: str, mode_errors: dict) -> str:
    """Why numeric judges nothing here, in one clause."""
    m = metrics.get(f"{mode}~numeric")
    if m is not None:  # it ran, and is NaN/Inf wherever the gradient is finite
        return numeric_clause(metrics, mode)
    if Mode.NUMERIC in mode_errors:  # compare_tensor says how it was cancelled or failed
        return "no numeric reference"
    if t.absent.get(Mode.NUMERIC):
        return f"no numeric reference ({t.absent['numeric']})"
    return "no numeric reference (the numeric mode was not run)"


def custom_vs_default(t: TensorResult, metrics: dict, why: str) -> tuple[str, str]:
    """Both present, custom finite, numeric unavailable (`why`)."""
    m = metrics["custom~default"]
    judge = f"{why}, so default is the judge"
    if m.shape_mismatch:
        return "differs", (
            f"custom and default gradients of {t.name} differ in shape "
            f"({m.shape_mismatch}); {judge}"
        )
    c, d = np.asarray(t.grads[Mode.CUSTOM]), np.asarray(t.grads[Mode.DEFAULT])
    undefined = ~np.isfinite(d.reshape(-1))
    tol = tolerances(t.dtype)
    if undefined.any():
        c, d = c.astype(np.float64).reshape(-1), d.astype(np.float64).reshape(-1)
        sub = pair_metrics(c[~undefined], d[~undefined], tol)
        k = int(undefined.sum())
        if sub.allclose:
            return "unchecked", (
                f"default is NaN/Inf at {k} of {c.size} elements where custom "
                f"is finite, and they agree elsewhere; {why}: nothing checks "
                "custom at those elements"
            )
        return "differs", (
            f"default is NaN/Inf at {k} of {c.size} elements, and elsewhere custom "
            f"differs from default at {sub.n_differ} of {sub.n}, "
            f"{err_text(sub)}; {judge}"
        )
    if m.allclose:
        p = metrics.get(PROBE)
        if p is not None and not p.allclose:
            return "differs", (
                f"custom matches default at all {m.n} elements under this "
                f"run's upstream, but under a random one they differ at "
                f"{p.n_differ} of {p.n} elements, {err_text(p)}: the "
                "backward does not use its incoming gradient as the chain rule "
                f"does (a correct one is linear in it); {judge}"
            )
        return "match", f"custom matches default at all {m.n} elements, {err_text(m)}; {judge}"
    c, d = c.astype(np.float64).reshape(-1), d.astype(np.float64).reshape(-1)
    where = f"custom differs from default at {m.n_differ} of {m.n} elements"
    if np.all(d[~close_mask(c, d, tol)] == 0):
        return "surrogate", (
            f"{where}, all where default is 0 (straight-through style), {err_text(m)}; {judge}"
        )
    return "differs", f"{where}, {err_text(m)}; {judge}"
