"""precision: "gradcheck says mismatch: is it float32 or my bug?". When the float32 custom
gradient disagrees with the float64 numeric reference, the custom gradient is computed again in
float64: agreement there means the float32 difference was rounding (pass, "rounding" in the
message); a disagreement that stays is a bug (fail). A surrogate gradient, or a forward where the
default disagrees with numeric too, cannot be judged this way and is skipped with the reason."""
from __future__ import annotations

import numpy as np

from gradviz.backends import numeric
from gradviz.backends.checks.outcome import compare, failed, passed, skipped
from gradviz.compare.metrics import close_mask, tolerances

NAME = "precision"
_FIX = ("The gradient is wrong in float64 too, so it is not rounding: check the backward's "
        "formula against the derivative of the forward (the tensors listed disagree with the "
        "finite-difference reference).")


def torch_check(ctx):
    return _check(ctx)


def tf_check(ctx):
    return _check(ctx)


def _check(ctx):
    if ctx.settings.dtype == "float64":
        return skipped(NAME, "the run is float64 already: its custom vs numeric verdict is the "
                       "answer, there is no higher precision to re-run in")
    plain = {n: t for n, t in ctx.tensors.items() if "custom" in t["grads"]}
    if not plain:
        return skipped(NAME, "the custom mode produced no gradient to compare")
    infos = ctx.numeric_infos or _numeric(ctx, plain)
    bad32 = _disagreeing(infos, {n: t["grads"]["custom"] for n, t in plain.items()}, "float32")
    if not bad32:
        return passed(NAME, "the float32 custom gradient agrees with numeric: nothing to re-run")
    got64 = ctx.adapter.differentiate(ctx.graph, ctx.build("custom", "float64"), "float64",
                                      ctx.device)
    grads64 = {n: got64[n]["grad"] for n in bad32 if got64.get(n, {}).get("grad") is not None}
    infos64 = _numeric(ctx, {n: {**plain[n], "grads": {"custom": g}} for n, g in grads64.items()})
    bad64 = _disagreeing(infos64, grads64, "float64")
    names = ", ".join(bad32)
    if not bad64:
        return passed(NAME, f"float32 custom disagrees with numeric for {names}, float64 "
                      "custom agrees: the difference is float32 rounding, not a bug")
    why_not = _not_judgeable(ctx, infos64, grads64, bad64)
    if why_not:
        return skipped(NAME, why_not)
    detail = "; ".join(f"{n}: {d}" for n, d in bad64.items())
    return failed(NAME, "stays", f"the custom gradient disagrees with numeric in float64 too "
                  f"({detail}): a bug in the backward, not rounding", ctx.backward_where(), _FIX)


def _numeric(ctx, tensors: dict) -> dict:
    built = ctx.build("custom", "float64")
    return numeric.compute(ctx.adapter, ctx.graph, built, ctx.device, tensors)


def _disagreeing(infos: dict, grads: dict, dtype: str) -> dict:
    """name -> detail for each tensor whose gradient disagrees with its numeric reference."""
    tol = tolerances(dtype, numeric=True)
    out = {}
    for name, g in grads.items():
        info = infos.get(name)
        if info is None:
            continue
        if info.get("grad") is not None:
            ok, detail = compare(g, info["grad"], tol)
        elif info["info"].method == "projection":
            proj = info["info"].projections
            ok, detail = compare(proj["custom"], proj["numeric"], tol)
            detail = "along random directions: " + detail
        else:
            continue
        if not ok:
            out[name] = detail
    return out


def _not_judgeable(ctx, infos64: dict, grads64: dict, bad64: dict) -> str:
    """Why a float64 disagreement is not called a bug: a surrogate, or numeric does not apply."""
    try:
        default = ctx.adapter.differentiate(ctx.graph, ctx.build("default", "float64"), "float64",
                                            ctx.device)
    except Exception:  # noqa: BLE001 - no default to tell a surrogate by: judge without it
        return ""
    tol = tolerances("float64", numeric=True)
    for name in bad64:
        d = default.get(name, {}).get("grad")
        ref = infos64.get(name, {}).get("grad")
        if d is None or ref is None:
            continue
        if not close_mask(np.asarray(d, np.float64).reshape(-1),
                          np.asarray(ref, np.float64).reshape(-1), tol).all():
            return ("the default gradient disagrees with numeric as well, so the forward is not "
                    "smooth at these inputs (or numeric does not apply): rounding cannot be told "
                    "from a bug here")
        off = ~close_mask(np.asarray(grads64[name], np.float64).reshape(-1),
                          np.asarray(ref, np.float64).reshape(-1), tol)
        if np.all(np.asarray(d).reshape(-1)[off] == 0):
            return (f"the custom gradient of {name} is a surrogate (it differs only where the "
                    "default gradient is zero, e.g. straight-through): the numeric reference "
                    "does not judge it")
    return ""
