"""precision: "gradcheck says mismatch: is it float32 or my bug?". When the float32 custom
gradient disagrees with the float64 numeric reference, the custom gradient is computed again in
float64: agreement there means the float32 difference was rounding (pass, "rounding" in the
message); a disagreement that stays is not rounding (fail, GV751).

It judges as the verdicts do (DESIGN.md "Verdicts"): the same tolerances and close_mask, elements
where numeric is NaN/Inf and custom finite left out (no reference there), a few kink elements
allowed. A surrogate (custom differs from numeric only where numeric is 0, a step straddled aside,
and agrees elsewhere: round, sign, a quantiser) is not judged by numeric in any precision: skip,
never "a bug". A gradient of the wrong shape is GV102's, not compared: skip."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gradviz.backends import numeric
from gradviz.backends.checks.outcome import passed, skipped
from gradviz.compare.kinks import no_kink
from gradviz.compare.metrics import Tol, close_mask, fmt, tolerances
from gradviz.compare.numeric_metrics import apart_from_numeric
from gradviz.compare.verdicts import KINK_FRACTION
from gradviz.model import CheckResult
from gradviz.vocab import CheckStatus

NAME = "precision"
_FIX = (
    "The gradient differs from the finite-difference reference in float64 too, so it is not "
    "rounding: check the backward's formula against the derivative of the forward, unless "
    "the difference is intended (a gradient reversal or a scaling: the tensor's GV30x "
    "finding says which it looks like)."
)


@dataclass(frozen=True)
class Judged:
    kind: str  # "agrees" | "surrogate" | "off"
    detail: str = ""


def torch_check(ctx):
    return _check(ctx)


def tf_check(ctx):
    return _check(ctx)


def jax_check(ctx):
    return _check(ctx)


def _check(ctx):
    if ctx.settings.dtype == "float64":
        return skipped(
            NAME,
            "the run is float64 already: its custom vs numeric verdict is the "
            "answer, there is no higher precision to re-run in",
        )
    plain = {n: t for n, t in ctx.tensors.items() if "custom" in t["grads"]}
    if not plain:
        return skipped(NAME, "the custom mode produced no gradient to compare")
    grads32 = {n: t["grads"]["custom"] for n, t in plain.items()}
    misfit = _wrong_shapes(plain, grads32)
    if misfit:
        return skipped(NAME, misfit)
    infos = ctx.numeric_infos or _numeric(ctx, plain)
    # where default agrees with numeric no kink explains custom being off (compare/kinks.py)
    witness = {
        n: no_kink(
            t["grads"]["default"],
            infos[n]["grad"],
            "float32",
            t["value"] if t.get("role") == "input" else None,
        )
        for n, t in plain.items()
        if n in infos
        and infos[n].get("grad") is not None
        and t["grads"].get("default") is not None
        and np.size(t["grads"]["default"]) == np.size(infos[n]["grad"])
    }
    judged32 = _judge_all(infos, grads32, "float32", witness)
    off32 = [n for n, j in judged32.items() if j.kind == "off"]
    surrogates = [n for n, j in judged32.items() if j.kind == "surrogate"]
    if not off32:
        if surrogates:
            return skipped(NAME, _surrogate_text(surrogates))
        return passed(NAME, "the float32 custom gradient agrees with numeric: nothing to re-run")
    got64 = ctx.adapter.differentiate(
        ctx.graph, ctx.build("custom", "float64"), "float64", ctx.device
    )
    grads64 = {n: got64[n]["grad"] for n in off32 if got64.get(n, {}).get("grad") is not None}
    misfit = _wrong_shapes(plain, grads64)
    if misfit:
        return skipped(NAME, misfit)
    infos64 = _numeric(ctx, {n: {**plain[n], "grads": {"custom": g}} for n, g in grads64.items()})
    judged64 = _judge_all(infos64, grads64, "float64", witness)
    bad64 = {n: j.detail for n, j in judged64.items() if j.kind == "off"}
    surrogates += [n for n, j in judged64.items() if j.kind == "surrogate"]
    rounding = [n for n in off32 if judged64.get(n, Judged("off")).kind == "agrees"]
    also = f"; {_surrogate_text(surrogates)}" if surrogates else ""
    if not bad64:
        if not rounding:
            return skipped(NAME, _surrogate_text(surrogates))
        # the tensors cleared as rounding, for the findings that must not call them a bug
        return CheckResult(
            NAME,
            CheckStatus.PASS,
            f"float32 custom disagrees with numeric for "
            f"{', '.join(rounding)}, float64 custom agrees: the difference is "
            "float32 rounding, not a bug" + also,
            tensors=tuple(rounding),
        )
    why_not = _default_disagrees_too(ctx, infos64, grads64, bad64) or _reversed(
        infos64, grads64, bad64
    )
    if why_not:
        return skipped(NAME, why_not)
    detail = "; ".join(f"{n}: {d}" for n, d in bad64.items())
    return CheckResult(
        NAME,
        CheckStatus.FAIL,
        f"the custom gradient differs from numeric in float64 too "
        f"({detail}): not float32 rounding" + also,
        ctx.backward_where(),
        _FIX,
        "stays",
        tuple(bad64),
    )


def _numeric(ctx, tensors: dict) -> dict:
    built = ctx.build("custom", "float64")
    return numeric.compute(ctx.adapter, ctx.graph, built, ctx.device, tensors)


def _wrong_shapes(plain: dict, grads: dict) -> str:
    """Why nothing can be compared element by element: a gradient whose shape is not its
    tensor's ("" when every one fits)."""
    bad = [
        (n, np.shape(g), np.shape(plain[n]["value"]))
        for n, g in grads.items()
        if plain[n]["value"] is not None and np.shape(g) != np.shape(plain[n]["value"])
    ]
    if not bad:
        return ""
    text = ", ".join(
        f"{n} has shape {tuple(g)} for a tensor of shape {tuple(v)}" for n, g, v in bad
    )
    return (
        f"the gradient has the wrong shape ({text}), see GV102: it cannot be compared with "
        "numeric element by element, in any precision"
    )


def _surrogate_text(names: list) -> str:
    return (
        f"the custom gradient of {', '.join(dict.fromkeys(names))} is a surrogate: it differs "
        "from numeric only where numeric is 0 (a step, a rounding, a quantiser) and agrees "
        "elsewhere, which the numeric reference does not judge in any precision"
    )


def _judge_all(infos: dict, grads: dict, dtype: str, witness: dict | None = None) -> dict:
    tol = tolerances(dtype, numeric=True)
    out = {}
    for name, g in grads.items():
        info = infos.get(name)
        if info is None:
            continue
        if info.get("grad") is not None:
            out[name] = judge_elements(g, info["grad"], tol, (witness or {}).get(name))
        elif info["info"].method == "projection":
            proj = info["info"].projections
            out[name] = judge_projections(proj["custom"], proj["numeric"], tol)
    return out


def _allowed_kinks(n: int) -> int:
    # as the verdicts allow a few elements at kinks (a finite difference straddling relu's 0);
    # a one-element tensor has none to spare
    return max(1, int(KINK_FRACTION * n)) if n > 1 else 0


def _worst(got, ref, both):
    """The largest absolute difference over `both` (elements finite in both), or None."""
    return float(np.max(np.abs(got[both] - ref[both]))) if both.any() else None


def judge_elements(g, ref, tol: Tol, witness=None) -> Judged:
    """custom `g` against numeric `ref`, element by element, as the verdicts compare them;
    `witness`: where default agrees with numeric, so no off element there is a kink."""
    g, ref, defined, atol, off = apart_from_numeric(g, ref, tol)
    k = int(np.count_nonzero(off))
    allowed = _allowed_kinks(int(np.count_nonzero(defined)))
    seen = off & witness if witness is not None and np.size(witness) == off.size else None
    if seen is not None and seen.any():
        allowed = 0
    if k <= allowed:
        return Judged("agrees")
    flat = off & (ref == 0)
    if flat.any() and k - int(np.count_nonzero(flat)) <= allowed:
        return Judged("surrogate")
    both = off & np.isfinite(g)
    worst = _worst(g, ref, both)
    left = int(defined.size - np.count_nonzero(defined))
    text = f"{k} of {int(np.count_nonzero(defined))} elements differ"
    if worst is not None:
        text += f", max abs difference {fmt(worst)}"
    if k > int(np.count_nonzero(both)):
        text += f", {k - int(np.count_nonzero(both))} of them NaN/Inf in custom"
    text += f" (tolerance {fmt(atol)} abs + {tol.rtol:g} rel)"
    if left:
        text += f"; numeric is NaN/Inf at {left} more, left out"
    return Judged("off", text)


def judge_projections(got, ref, tol: Tol) -> Judged:
    """custom against numeric along random directions (g . v per direction)."""
    got, ref, defined, atol, off = apart_from_numeric(got, ref, tol)
    if not off.any():
        return Judged("agrees")
    if np.all(np.abs(ref[defined]) <= atol):
        return Judged("surrogate")
    worst = _worst(got, ref, off & np.isfinite(got))
    return Judged(
        "off",
        f"along random directions: {int(off.sum())} of {int(defined.sum())} "
        f"differ{f', max abs difference {fmt(worst)}' if worst is not None else ''} "
        f"(tolerance {fmt(atol)} abs + {tol.rtol:g} rel)",
    )


def _default_disagrees_too(ctx, infos64: dict, grads64: dict, bad64: dict) -> str:
    """Why a float64 disagreement is not called "not rounding": the framework's own gradient
    of the forward disagrees with numeric at the same elements, so numeric itself is in doubt
    there (a forward not smooth at these inputs)."""
    try:
        default = ctx.adapter.differentiate(
            ctx.graph, ctx.build("default", "float64"), "float64", ctx.device
        )
    except Exception:  # noqa: BLE001 - no default to ask: judge without it
        return ""
    tol = tolerances("float64", numeric=True)
    for name in bad64:
        d = default.get(name, {}).get("grad")
        ref = infos64.get(name, {}).get("grad")
        if d is None or ref is None or np.shape(d) != np.shape(ref):
            continue
        ref = np.asarray(ref, np.float64).reshape(-1)
        c_off = ~close_mask(np.asarray(grads64[name], np.float64).reshape(-1), ref, tol)
        d_off = ~close_mask(np.asarray(d, np.float64).reshape(-1), ref, tol)
        if (c_off & d_off).any():
            return (
                "the default gradient disagrees with numeric as well, at the same elements, "
                "so the forward is not smooth at these inputs (or numeric does not apply): "
                "rounding cannot be told from a wrong gradient here"
            )
    return ""


def _reversed(infos64: dict, grads64: dict, bad64: dict) -> str:
    """Why a float64 disagreement is not called "not rounding" as if it were a bug: every one is
    the numeric gradient times one negative factor at every element, a gradient reversal (or a
    flipped sign: GV302 / GV305 tell which from the op's name), which is no question of
    precision."""
    factors = {}
    tol = tolerances("float64", numeric=True)
    for name in bad64:
        ref = infos64.get(name, {}).get("grad")
        if ref is None:
            return ""
        g = np.asarray(grads64[name], np.float64).reshape(-1)
        ref = np.asarray(ref, np.float64).reshape(-1)
        live = np.abs(ref) > tol.atol_for(ref)
        if live.sum() < 2 or g.shape != ref.shape:
            return ""
        k = float(np.median(g[live] / ref[live]))
        # as the check judges: within its float64 tolerance of k x numeric, everywhere
        if k >= 0 or not np.allclose(g, k * ref, rtol=tol.rtol, atol=tol.atol_for(k * ref)):
            return ""
        factors[name] = k
    said = ", ".join(f"{n} is {fmt(k)} x numeric" for n, k in factors.items())
    return (
        f"the custom gradient is numeric times a negative factor at every element ({said}): "
        "a gradient reversal, or a flipped sign (the diagnostics say which), not a question "
        "of precision"
    )
