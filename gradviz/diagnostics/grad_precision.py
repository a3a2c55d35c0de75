"""A gradient in a narrower float format than its tensor: returned as bfloat16 / float16 for a
float32 input (GV103, from the dtype the worker recorded: TensorResult.grad_dtypes), or cast back
by the backward itself so that only its numbers still show it (GV110: every value exactly a
bfloat16 or float16 number while the true gradient's are not). Said where the rounding makes
custom disagree with a reference the verdict uses; one with no visible effect is a warning."""

from __future__ import annotations

import numpy as np

from gradviz.compare.metrics import Tol
from gradviz.compare.rounding import BITS, looks_rounded, narrowest
from gradviz.diagnostics import jax_words
from gradviz.diagnostics.cause_reference import close
from gradviz.diagnostics.context import Context
from gradviz.diagnostics.finding import Finding
from gradviz.vocab import Framework, Mode

_FIX = (
    "Compute the gradient in the input's dtype: drop the cast to {fmt} in backward (a cast "
    "back afterwards keeps the rounding), or cast its operands to x.dtype first "
    "(g.to(x.dtype) in torch, tf.cast(g, x.dtype) in TF)."
)


def own_dtype(t) -> str:
    return str(t.value.dtype) if t.value is not None else str(t.dtype)


def narrowed(
    ctx: Context, t, c: np.ndarray, ref, metrics: dict, passing: bool = False
) -> Finding | None:
    """GV103 / GV110 for a gradient narrower than its tensor; an error where the rounding makes
    custom disagree with a reference and the verdict does not pass the tensor, else a warning."""
    own = own_dtype(t)
    if own not in BITS or c.size != ref.values.size:
        return None  # a wrong shape: GV102 (and GV103 for a dtype) say it
    returned = t.grad_dtypes.get(Mode.CUSTOM)
    if returned in BITS and BITS[returned] < BITS[own]:
        return _returned(ctx, t, c, ref, _visible(c, ref, metrics) and not passing, returned, own)
    if returned:
        return None  # another dtype (float64 for float32): gradients.py's GV103
    fmt = narrowest(c, wider_than=own)
    if fmt is None or not looks_rounded(c, ref.values, fmt) or not _within(c, ref, fmt):
        return None
    if not _visible(c, ref, metrics):
        return None  # rounding that changes no comparison: nothing to tell
    err = _max_rel(c, ref)
    return ctx.finding(
        "GV110-grad-rounded",
        "warning" if passing else "error",
        f"The custom gradient of '{t.name}' is {own} but every one of its {c.size} values is "
        f"exactly a {fmt} number, while {ref.words()} is not: the backward computed it in {fmt} "
        f"and cast it back, so it differs from the true gradient by up to {_pct(err)} relative "
        f"({_keeps(fmt)}).",
        jax_words.say(ctx, "narrow", _FIX.format(fmt=fmt), fmt=fmt),
        ctx.backward_where(),
        tensor=t.name,
    )


def _returned(ctx: Context, t, c, ref, visible: bool, returned: str, own: str) -> Finding:
    err = _max_rel(c, ref)
    torch = ctx.framework == Framework.TORCH
    passed = (
        f"; autograd casts it back to {own}, but the rounding stays"
        if torch
        else jax_words.say(
            ctx, "dtype_after", f"; TensorFlow passes it on as {returned}", own=returned
        )
    )
    effect = f"it differs from {ref.words()} by up to {_pct(err)} relative ({_keeps(returned)})"
    return ctx.finding(
        "GV103-grad-dtype",
        "error" if visible else "warning",
        f"The custom backward returns the gradient of '{t.name}' in {returned}, but "
        f"'{t.name}' is {own}{passed}: {effect}"
        + ("" if visible else ", within the verdict's tolerance")
        + ".",
        jax_words.say(ctx, "narrow", _FIX.format(fmt=returned), fmt=returned),
        ctx.backward_where(),
        tensor=t.name,
    )


def _within(c, ref, fmt: str) -> bool:
    """custom is the truth up to a few roundings to `fmt` (it was computed in it)."""
    widened = Tol(rtol=ref.tol.rtol + 4 * 2.0 ** -BITS[fmt], atol=ref.tol.atol)
    return close(c, ref.values, widened, ref.defined)


def _visible(c, ref, metrics: dict) -> bool:
    """The rounding makes custom fail a comparison the verdict rests on."""
    if not close(c, ref.values, ref.tol, ref.defined):
        return True
    return any(
        m is not None and not m.allclose
        for k, m in metrics.items()
        if k in ("custom~default", "custom~numeric")
    )


def _max_rel(c, ref) -> float:
    a = np.asarray(c, dtype=np.float64).reshape(-1)[ref.defined]
    b = ref.values.reshape(-1)[ref.defined]
    scale = np.maximum(np.abs(a), np.abs(b))
    live = scale > ref.tol.atol_for(b)
    return float((np.abs(a - b)[live] / scale[live]).max()) if live.any() else 0.0


def _keeps(fmt: str) -> str:
    return f"{fmt} keeps {BITS[fmt]} significant bits: it rounds by up to {_pct(2.0 ** -BITS[fmt])}"


def _pct(x: float) -> str:
    return f"{100 * x:.2g} %"
