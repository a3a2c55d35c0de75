"""The cause of a wrong custom gradient, where its numbers show it (GV305-GV308, GV110 and the
narrowing GV103): the sign flipped, the right gradient transposed or its axes permuted, another
input's gradient, a broadcast gradient summed over the wrong axes, a gradient rounded to
bfloat16 / float16. Each is read against the true gradient (cause_reference: numeric, or default
where there is none, and the finding says which) element for element, and only where custom
differs from it. At most one cause per tensor: `named(ctx)` is what versus_numeric consults so
that a tensor whose cause is named is not also called "no known pattern, a bug" (GV301)."""

from __future__ import annotations

import numpy as np

from gradviz.compare import tensor_metrics
from gradviz.compare.verdicts import PASSING
from gradviz.diagnostics import cause_arrays as A
from gradviz.diagnostics import cause_words as W
from gradviz.diagnostics import grad_precision, jax_words
from gradviz.diagnostics.cause_reference import close, reference_of
from gradviz.diagnostics.context import Context
from gradviz.diagnostics.finding import Finding
from gradviz.vocab import Mode

_LEAVES = ("input", "param")


def check(ctx: Context) -> list[Finding]:
    # an intended reversal (GV302) is told by versus_numeric, with the other surrogates, where
    # the contract checks look for what is intended
    return [f for f in named(ctx).values() if f.code != "GV302-grad-surrogate"]


def named(ctx: Context) -> dict[str, Finding]:
    """{tensor name: the finding naming the cause of its custom gradient}, worked out once."""
    if "causes" not in ctx.cache:
        ctx.cache["causes"] = _find(ctx) if Mode.CUSTOM not in ctx.result.mode_errors else {}
    return ctx.cache["causes"]


def _find(ctx: Context) -> dict[str, Finding]:
    tensors = [t for t in ctx.result.tensors if not getattr(t, "frozen", False)]
    metrics = {t.name: _metrics(ctx, t) for t in tensors}
    refs = {t.name: reference_of(t, metrics[t.name]) for t in tensors}
    cleared = ctx.cleared_as_rounding()
    out: dict[str, Finding] = {}
    for t in tensors:
        c, ref = t.grads.get(Mode.CUSTOM), refs[t.name]
        if t.role not in _LEAVES or c is None or ref is None or t.name in cleared:
            continue
        c = np.asarray(c, dtype=np.float64)
        if not np.isfinite(c).all():
            continue  # GV401's business
        passing = _verdict(ctx, t) in PASSING
        found = grad_precision.narrowed(ctx, t, c, ref, metrics[t.name], passing)
        if found is None and not passing and not close(c, ref.values, ref.tol, ref.defined):
            found = _wrong_numbers(ctx, t, c, ref, tensors, refs)
        if found is not None:
            out[t.name] = found
    return out


def _verdict(ctx: Context, t) -> str:
    """The tensor's verdict: a finding never calls a bug what the verdict passes."""
    comp = ctx.comparison_of(t.name)
    return comp.verdict if comp is not None else ""


def _metrics(ctx: Context, t) -> dict:
    comp = ctx.comparison_of(t.name)
    return comp.metrics if comp is not None else tensor_metrics(t)


def _wrong_numbers(ctx: Context, t, c, ref, tensors, refs):
    k = (
        A.factor(c.reshape(-1)[ref.defined], ref.values.reshape(-1)[ref.defined], ref.tol)
        if c.size == ref.values.size
        else None
    )
    if k is not None and k < 0:
        return sign_finding(ctx, t.name, k, ref, int(ref.defined.sum()))
    if not ref.defined.all():
        return None  # reorderings move the undefined elements: not read here
    p = A.permuted(c, ref.values, ref.tol)
    if p is not None:
        return W.permuted(ctx, t, c, ref, p)
    others = [
        o
        for o in tensors
        if o.name != t.name and refs.get(o.name) is not None and refs[o.name].defined.all()
    ]
    for o in others:
        if o.role in _LEAVES and A.belongs_to(c, ref.values, refs[o.name].values, refs[o.name].tol):
            return W.belongs(ctx, t, o, c, ref, refs[o.name], _swapped(o, t, refs))
    for o in others:
        axes = A.reduced_wrong(c, ref.values, refs[o.name].values, ref.tol)
        if axes is not None:
            return W.reduced(ctx, t, o, c, ref, refs[o.name], *axes)
    return None


def _swapped(o, t, refs) -> bool:
    """o's custom gradient is t's true one as well: the two are swapped, not only mixed up."""
    oc = o.grads.get(Mode.CUSTOM)
    return (
        oc is not None
        and np.size(oc) == refs[t.name].values.size
        and close(oc, refs[t.name].values, refs[t.name].tol)
    )


def sign_finding(ctx: Context, tensor: str, k: float, ref, n: int) -> Finding:
    """custom = k * truth with k < 0: an intended gradient reversal where the op says it is one
    (its name or its documentation), else the sign flipped: a bug. Never both."""
    evidence = W.reversal_evidence(ctx, tensor)
    if evidence:
        return ctx.finding(
            "GV302-grad-surrogate",
            "info",
            f"The custom gradient of '{tensor}' equals {W.num(k)} times {ref.words()} at all {n} "
            f"elements; it looks like an intended gradient reversal ({evidence}).",
            "Nothing to do if a gradient reversal is what you want; the gradient is not the "
            "derivative of the forward, by design.",
            ctx.backward_where(),
            tensor=tensor,
        )
    size = "" if abs(k + 1) <= 1e-3 else f", and scaled by {W.num(abs(k))}"
    return ctx.finding(
        "GV305-grad-sign-flipped",
        "error",
        f"The custom gradient of '{tensor}' has its sign flipped{size}: it equals {W.num(k)} "
        f"times {ref.words()} at all {n} elements.",
        jax_words.say(
            ctx,
            "sign",
            "Fix the sign in backward (a derivative such as d/dx cos(x) = -sin(x), or the "
            "operand order of a subtraction); if a gradient reversal is intended, name the op so "
            "(GradReverse, GRL) or say 'gradient reversal' in its docstring.",
        ),
        ctx.backward_where(),
        tensor=tensor,
    )
