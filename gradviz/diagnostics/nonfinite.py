"""NaN / Inf: in which mode, how many, at which input values, and who introduced them (GV401),
and non-finite forward outputs (GV402)."""

from __future__ import annotations

import numpy as np

from gradviz.diagnostics import jax_words
from gradviz.diagnostics.context import Context, fmt
from gradviz.vocab import Mode

_SHOW = 3
# the advice where the non-finite values are not (only) the forward's own
_GUARD = (
    "Guard the backward where it divides by zero or takes log/sqrt of 0 (e.g. "
    "torch.where / tf.where with a safe denominator)."
)


def check(ctx: Context) -> list:
    out = []
    for t in ctx.result.tensors:
        if t.role == "output":
            continue
        c, d = _arr(t.grads.get(Mode.CUSTOM)), _arr(t.grads.get(Mode.DEFAULT))
        bad_c = None if c is None else ~np.isfinite(c)
        bad_d = None if d is None else ~np.isfinite(d)
        if bad_c is not None and bad_c.any():
            out.append(_custom(ctx, t, c, bad_c, bad_d))
        elif bad_d is not None and bad_d.any():
            fixed = " and the custom gradient is finite there" if c is not None else ""
            out.append(
                ctx.finding(
                    "GV401-non-finite",
                    "info",
                    f"The default (autodiff) gradient of '{t.name}' has {_counts(d, bad_d)}"
                    f"{_at(ctx, t, bad_d)}{fixed}.",
                    "Nothing to do if your custom gradient is meant to avoid this; otherwise guard "
                    "the forward where its derivative is undefined.",
                    ctx.op_where(),
                    tensor=t.name,
                )
            )
    out += _outputs(ctx)
    return out


def _custom(ctx: Context, t, c, bad_c, bad_d):
    counts = _counts(c, bad_c)
    at = _at(ctx, t, bad_c)
    if bad_d is None or bad_d.shape != bad_c.shape:
        return ctx.finding(
            "GV401-non-finite",
            "error",
            f"The custom gradient of '{t.name}' has {counts}{at}.",
            jax_words.say(ctx, "guard", _GUARD),
            ctx.backward_where(),
            tensor=t.name,
        )
    new = int((bad_c & ~bad_d).sum())
    if new == 0:
        return ctx.finding(
            "GV401-non-finite",
            "warning",
            f"The custom gradient of '{t.name}' has {counts}{at}, at the same places as the "
            "default gradient: the forward is not differentiable there.",
            jax_words.say(
                ctx,
                "finite",
                "If those inputs can occur, define a finite gradient there in backward (e.g. with "
                "torch.where / tf.where).",
            ),
            ctx.backward_where(),
            tensor=t.name,
        )
    return ctx.finding(
        "GV401-non-finite",
        "error",
        f"The custom gradient of '{t.name}' has {counts}{at}; the custom backward introduced "
        f"{new} of them, where the default gradient is finite.",
        jax_words.say(ctx, "guard", _GUARD),
        ctx.backward_where(),
        tensor=t.name,
    )


def _outputs(ctx: Context) -> list:
    for mode in (Mode.CUSTOM, Mode.DEFAULT):
        o = _arr(ctx.result.outputs.get(mode))
        if o is not None and not np.all(np.isfinite(o)):
            bad = ~np.isfinite(o)
            inp = ctx.result.tensor("out")
            return [
                ctx.finding(
                    "GV402-non-finite-output",
                    "warning",
                    f"The {mode} forward output has {_counts(o, bad)}"
                    f"{_at(ctx, inp, bad) if inp is not None else ''}.",
                    "Check the forward for division by zero, log/sqrt of non-positive values or "
                    "overflow at these inputs.",
                    ctx.op_where(),
                    tensor="out",
                )
            ]
    return []


def _arr(g):
    return None if g is None else np.asarray(g, dtype=np.float64)


def _counts(a, bad) -> str:
    nan, inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    parts = [f"{nan} NaN"] if nan else []
    parts += [f"{inf} Inf"] if inf else []
    return f"{' and '.join(parts)} of {a.size} elements"


def _at(ctx: Context, t, bad) -> str:
    """', at element 2 where x = 0' using the op's inputs of the same shape."""
    idx = np.flatnonzero(bad.reshape(-1))[:_SHOW]
    if idx.size == 0:
        return ""
    inputs = [
        i
        for i in ctx.result.tensors
        if i.role == "input" and i.value is not None and np.asarray(i.value).size == bad.size
    ]
    if not inputs:
        return f", at element{'s' if idx.size > 1 else ''} {', '.join(map(str, idx))}"
    parts = []
    for k in idx:
        vals = ", ".join(
            f"{i.name} = {fmt(float(np.asarray(i.value).reshape(-1)[k]))}" for i in inputs[:2]
        )
        parts.append(f"element {k} ({vals})")
    more = " ..." if int(bad.sum()) > _SHOW else ""
    return ", at " + "; ".join(parts) + more
