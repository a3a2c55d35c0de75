"""The custom gradient disagrees with the numeric one while the default agrees with it: a bug
(GV301) or an intended surrogate (GV302: straight-through, reversal, clipping, scaling)."""

from __future__ import annotations

import numpy as np

from gradviz.compare import tensor_metrics
from gradviz.compare.metrics import close_mask, fmt, tolerances
from gradviz.compare.verdicts import numeric_defined
from gradviz.diagnostics import causes, jax_words, surrogate_direction
from gradviz.diagnostics.context import Context


def check(ctx: Context) -> list:
    if "custom" in ctx.result.mode_errors:
        return []
    out = []
    told = causes.named(ctx)  # a tensor whose cause is named has that finding instead
    told = {**surrogate_direction.against_step(ctx), **told}
    rounding = ctx.cleared_as_rounding()  # the precision check's story: no bug
    for t in ctx.result.tensors:
        if t.role not in ("input", "param") or "custom" not in t.grads or t.name in rounding:
            continue
        if t.name in told:  # an intended reversal is this check's surrogate story
            if told[t.name].code == "GV302-grad-surrogate":
                out.append(told[t.name])
            continue
        comp = ctx.comparison_of(t.name)
        if comp is not None and comp.verdict == "match":
            continue  # off numeric at kinks only (the verdict's allowance): no bug to name
        metrics = comp.metrics if comp is not None else tensor_metrics(t)
        cn, dn = metrics.get("custom~numeric"), metrics.get("default~numeric")
        if cn is None or cn.allclose or cn.shape_mismatch:
            continue
        c = np.asarray(t.grads["custom"], dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(c)):
            continue  # GV401's business
        if dn is not None and dn.allclose:
            ref, ref_name = t.grads.get("default"), "default"
        elif dn is None and "default" in t.absent and "numeric" in t.grads:
            ref, ref_name = t.grads["numeric"], "numeric"  # default cut: numeric is the truth
        elif (
            dn is not None
            and "numeric" in t.grads
            and getattr(metrics.get("custom~default"), "allclose", False)
        ):
            # default is custom's own gradient: it comes from the forward itself (a .detach()
            # trick, a gradient hook), not a backward of its own; numeric is the truth
            ref, ref_name = t.grads["numeric"], "same"
        else:
            continue  # default is off too: nothing to say that the verdict does not
        out.append(_judge(ctx, t, c, ref, ref_name, cn, comp.verdict if comp else ""))
    return [f for f in out if f is not None]


def _judge(ctx: Context, t, c: np.ndarray, ref, ref_name: str, cn: dict, verdict: str = ""):
    unit = "random directions" if cn.method == "projection" else "elements"
    other = {
        "default": "the default gradient agrees with it",
        "numeric": "the default has no gradient",
        "same": jax_words.say(
            ctx,
            "same",
            "the default gives the same gradient: it comes from the forward itself (a "
            ".detach() trick such as x + (q - x).detach(), or a gradient hook), not "
            "from a backward of its own",
        ),
    }[ref_name]
    base = (
        f"The custom gradient of '{t.name}' differs from the numeric gradient at "
        f"{cn.n_differ} of {cn.n} {unit} (max abs error {fmt(cn.max_abs_err)}), while "
        f"{other}"
    )
    if ref is None or np.asarray(ref).size != c.size:
        return ctx.finding(
            "GV301-grad-wrong",
            "error",
            base + ".",
            jax_words.say(
                ctx,
                "chain_rule",
                "Check the chain rule in backward: multiply the incoming gradient by "
                "the derivative of the forward at the saved inputs.",
            ),
            ctx.backward_where(),
            tensor=t.name,
        )
    d = np.asarray(ref, dtype=np.float64).reshape(-1)
    x = _input_values(ctx, t, c.size)
    if ref_name in ("numeric", "same"):  # where numeric is NaN/Inf it is no reference (verdicts)
        keep = numeric_defined(c, d)
        if not keep.all():
            c, d = c[keep], d[keep]
            x = x[keep] if x is not None and x.size == keep.size else None
    part = jax_words.say(ctx, "part", "backward")
    pattern = _pattern(c, d, x, tolerances(t.dtype, numeric=True), part)
    if pattern is not None and pattern[0] == "straight-through estimator" and verdict == "differs":
        # The reference is ~0 there because the run's upstream cancels (upstream ones through a
        # softmax or a centring), not because the forward is flat: the verdict found the
        # derivative defined and not 0 at those elements, so no estimator story holds.
        pattern = None
    if pattern is None:
        return ctx.finding(
            "GV301-grad-wrong",
            "error",
            base + "; it follows no known surrogate pattern, so it looks like a bug.",
            jax_words.say(
                ctx,
                "chain_rule",
                "Check the chain rule in backward: multiply the incoming gradient by the "
                "derivative of the forward at the saved inputs, and return the gradients in "
                "input order.",
            ),
            ctx.backward_where(),
            tensor=t.name,
        )
    kind, why, severity = pattern
    if kind == "negative factor":  # one rule for a reversal and a flipped sign (causes.py)
        return causes.sign_finding(ctx, t.name, float(why), _Ref(ref_name), int(c.size))
    if severity != "info":
        return ctx.finding(
            "GV301-grad-wrong",
            severity,
            f"{base}; {why}.",
            jax_words.say(
                ctx, "factor", "Fix the constant factor in backward unless the scaling is intended."
            ),
            ctx.backward_where(),
            tensor=t.name,
        )
    return ctx.finding(
        "GV302-grad-surrogate",
        "info",
        f"{base}; it looks like an intended {kind}: {why}.",
        f"Nothing to do if a {kind} is what you want; document it, since this gradient is not "
        "the derivative of the forward.",
        ctx.backward_where(),
        tensor=t.name,
    )


def _input_values(ctx: Context, t, size: int) -> np.ndarray | None:
    if t.role == "input" and t.value is not None:
        return np.asarray(t.value, dtype=np.float64).reshape(-1)
    return None


def _pattern(c, d, x, tol, part: str = "backward") -> tuple[str, str, str] | None:
    """(kind, why, severity) of a recognisable surrogate, or None."""
    differ = ~close_mask(c, d, tol)
    if np.all(np.abs(d[differ]) <= tol.atol_for(d)) and np.any(c[differ] != 0):
        n = int(differ.sum())
        return (
            "straight-through estimator",
            f"all {n} differing elements are where the true gradient is 0 and the custom one "
            "passes a gradient through",
            "info",
        )
    nz = np.abs(d) > tol.atol_for(d)
    if nz.sum() >= 2:
        ratio = c[nz] / d[nz]
        k = float(np.median(ratio))
        if np.allclose(ratio, k, rtol=1e-3, atol=1e-6) and np.allclose(
            c[~nz], 0, atol=tol.atol_for(d)
        ):
            if k < 0:
                return ("negative factor", repr(k), "")
            why = (
                f"it equals {fmt(k)} times the true gradient everywhere, which is usually a "
                f"wrong constant factor in {part} (a bug) unless you scale on purpose"
            )
            cap = float(np.max(np.abs(c[nz])))
            if (
                cap > 0
                and np.allclose(np.abs(c[nz]), cap, rtol=1e-4)
                and np.all(np.abs(d[nz]) >= cap * (1 - 1e-4))
            ):
                # Clipping at +-cap where every element exceeds it looks exactly like scaling.
                why += (
                    f"; or gradient clipping at +-{fmt(cap)}, if every element of the true "
                    f"gradient exceeds it here (try upstream ones on the op graph to tell)"
                )
            return ("scaled gradient", why, "warning")
    same = ~differ
    if same.any():
        bound = float(np.max(np.abs(c[differ]))) if differ.any() else 0.0
        zeroed = np.all(c[differ] == 0)
        clipped = (
            bound > 0
            and np.allclose(np.abs(c[differ]), bound, rtol=1e-4)
            and np.all(np.abs(d[differ]) >= bound * (1 - 1e-4))
            and np.all(np.sign(c[differ]) == np.sign(d[differ]))
        )
        if clipped:
            return (
                "gradient clipping",
                f"it equals the true gradient where that is within "
                f"+-{fmt(bound)} and is capped at +-{fmt(bound)} at the other "
                f"{int(differ.sum())} elements",
                "info",
            )
        if zeroed and x is not None:
            lo, hi = float(np.min(np.abs(x[differ]))), float(np.max(np.abs(x[same])))
            if lo >= hi:
                return (
                    "gradient clipping (zeroed outside a range)",
                    f"it equals the true gradient where |input| <= {fmt(hi)} and is 0 at the "
                    f"{int(differ.sum())} elements where |input| >= {fmt(lo)}",
                    "info",
                )
    return None


class _Ref:
    """What sign_finding says its numbers rest on, for this check's reference."""

    def __init__(self, name: str):
        self.name = name

    def words(self, of: str = "") -> str:
        return (
            f"the default gradient{of} (numeric agrees with it)"
            if self.name == "default"
            else f"the numeric (finite-difference) gradient{of}"
        )
