"""A surrogate that pushes against its step (GV309): the forward of an elementwise op never
decreases as its input grows (round, sign, a step, a quantiser), yet its straight-through
gradient carries the upstream with the opposite sign at some elements, so training moves the
input the wrong way there (or the reverse, for a forward that never increases). Read off the
forward's own values: sorted by input, the outputs only rise (or only fall). Only where the
verdict is `surrogate`, on the op graph (the output is the op's own), one input beside one
output of its size. `against_step(ctx)` is what versus_numeric consults: such a tensor gets this
warning instead of "an intended straight-through estimator" (GV302)."""

from __future__ import annotations

import numpy as np

from gradviz.diagnostics import jax_words
from gradviz.diagnostics.context import Context
from gradviz.diagnostics.finding import Finding
from gradviz.vocab import Mode


def check(ctx: Context) -> list[Finding]:
    return list(against_step(ctx).values())


def against_step(ctx: Context) -> dict[str, Finding]:
    if "surrogate_direction" not in ctx.cache:
        ctx.cache["surrogate_direction"] = _find(ctx)
    return ctx.cache["surrogate_direction"]


def _find(ctx: Context) -> dict[str, Finding]:
    r = ctx.result
    leaves = [t for t in r.tensors if t.role in ("input", "param") and not t.frozen]
    outs = [t for t in r.tensors if t.role == "output"]
    if r.request.settings.graph != "op" or len(leaves) != 1 or len(outs) != 1:
        return {}
    x, out = leaves[0], outs[0]
    comp = ctx.comparison_of(x.name)
    c = x.grads.get(Mode.CUSTOM)
    if (
        comp is None
        or comp.verdict != "surrogate"
        or c is None
        or x.value is None
        or out.value is None
        or np.size(out.value) != np.size(x.value) != np.size(c)
    ):
        return {}
    step = _direction(x.value, out.value)
    if step is None:
        return {}
    up = out.grads.get(Mode.CUSTOM)
    up = (
        np.ones(np.size(c))
        if up is None or np.size(up) != np.size(c)
        else np.asarray(up, dtype=np.float64).reshape(-1)
    )
    against = np.asarray(c, dtype=np.float64).reshape(-1) * up * step < 0
    k = int(against.sum())
    if k == 0:
        return {}
    i = int(np.flatnonzero(against)[0])
    way = "never decreases" if step > 0 else "never increases"
    return {
        x.name: ctx.finding(
            "GV309-surrogate-against-step",
            "warning",
            f"The surrogate gradient of '{x.name}' points against the forward's step at {k} of "
            f"{np.size(c)} elements: the forward {way} as '{x.name}' grows, so a straight-through "
            f"gradient carries the upstream with {'its' if step > 0 else 'the opposite'} sign, but at "
            f"element {i} the upstream is {up[i]:.4g} and the custom gradient "
            f"{float(np.asarray(c).reshape(-1)[i]):.4g}: training would move '{x.name}' the wrong way there.",
            jax_words.say(
                ctx,
                "step",
                "Pass the incoming gradient on with the step's sign (grad_output, or grad_output "
                "times a non-negative mask such as |x| <= 1), unless pushing against the step is "
                "intended.",
            ),
            ctx.backward_where(),
            tensor=x.name,
        )
    }


def _direction(x, y) -> int | None:
    """+1 when y, read in the order of x, only rises (never falls, rises somewhere); -1 when it
    only falls; None otherwise (not a monotone step, or x with ties that y splits)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if x.size < 2 or not (np.isfinite(x).all() and np.isfinite(y).all()):
        return None
    dy = np.diff(y[np.argsort(x, kind="stable")])
    if np.all(dy >= 0) and np.any(dy > 0):
        return 1
    if np.all(dy <= 0) and np.any(dy < 0):
        return -1
    return None
