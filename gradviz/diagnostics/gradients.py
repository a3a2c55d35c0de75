"""Gradients that came back but do not fit their tensor (shape, dtype: TensorFlow passes these on
without a word), and inputs that need a gradient but got none (GV102, GV103, GV105)."""

from __future__ import annotations

import numpy as np

from gradviz.compare.rounding import BITS
from gradviz.diagnostics import causes, jax_words
from gradviz.diagnostics.context import Context
from gradviz.verdict import PASSING
from gradviz.vocab import Framework, Mode

_LEAF_ROLES = ("input", "param")


def check(ctx: Context) -> list:
    out = []
    if Mode.CUSTOM in ctx.result.mode_errors:
        return out
    has_backward = ctx.backward() is not None  # a plain Module/Layer has no custom gradient
    for t in ctx.result.tensors:
        if t.role not in _LEAF_ROLES:
            continue
        g = t.grads.get(Mode.CUSTOM)
        if g is not None:
            out += _shape_dtype(ctx, t, np.asarray(g))
        elif Mode.CUSTOM in t.absent and has_backward:
            out += _missing(ctx, t)
    return out


def _shape_dtype(ctx: Context, t, g: np.ndarray) -> list:
    out = []
    value = t.value
    want = tuple(value.shape) if value is not None else tuple(t.shape)
    if tuple(g.shape) != want:
        silent = (
            " and TensorFlow passed it on without an error" if ctx.framework == Framework.TF else ""
        )
        out.append(
            ctx.finding(
                "GV102-grad-shape",
                "error",
                f"The custom gradient of '{t.name}' has shape {_shape(g.shape)} ({g.size} elements) "
                f"but '{t.name}' has shape {_shape(want)}{silent}.",
                f"Return a gradient with exactly the shape of '{t.name}' (e.g. upstream * ..., not "
                "a reduce_sum of it; sum only over broadcast dimensions).",
                ctx.backward_where(),
                tensor=t.name,
            )
        )
    # the dtype the backward returned: torch's autograd casts it to the input's before gradviz
    # sees it, and numpy has no bfloat16 (TensorResult.grad_dtypes)
    own = t.grad_dtypes.get(Mode.CUSTOM) or (str(g.dtype) if g.dtype.kind == "f" else "")
    told = causes.named(ctx).get(t.name)  # a narrowing one, with its rounding, is told there
    if (
        value is not None
        and own
        and own != str(value.dtype)
        and (told is None or told.code != "GV103-grad-dtype")
    ):
        torch = ctx.framework == Framework.TORCH
        wider = BITS.get(own, 0) > BITS.get(str(value.dtype), 0)
        after = (
            f"; autograd casts it back to {value.dtype}, so training gets {value.dtype} "
            "and only the work in the wider dtype is wasted"
            if torch and wider
            else f"; autograd casts it back to {value.dtype}"
            if torch
            else jax_words.say(ctx, "dtype_after", "", own=own)
            if ctx.framework == Framework.JAX
            else f"; TensorFlow passes it on as {own}, and adding it to a {value.dtype} "
            f"gradient or applying it to a {value.dtype} variable can raise"
        )
        integer = own.startswith(("int", "uint", "bool"))
        if integer:  # whole numbers: the fraction of every element is gone, cast back or not
            after += (
                "; an integer gradient drops the fraction of every element, so it is "
                "wrong wherever the true gradient is not a whole number"
            )
        comp = ctx.comparison_of(t.name)
        passing = comp is not None and comp.verdict in PASSING
        severity = "error" if integer and not passing else "info" if torch and wider else "warning"
        out.append(
            ctx.finding(
                "GV103-grad-dtype",
                severity,
                f"The custom gradient of '{t.name}' is {own} but '{t.name}' is {value.dtype}"
                f"{after}.",
                jax_words.say(
                    ctx,
                    "cast",
                    "Cast the gradient to the input's dtype (tf.cast(g, x.dtype) / g.to(x.dtype)).",
                ),
                ctx.backward_where(),
                tensor=t.name,
            )
        )
    return out


def _missing(ctx: Context, t) -> list:
    ref_mode, ref = None, None
    for mode in (Mode.DEFAULT, Mode.NUMERIC):
        g = t.grads.get(mode)
        if g is not None and np.any(np.asarray(g, dtype=np.float64)[np.isfinite(g)] != 0):
            ref_mode, ref = mode, np.asarray(g, dtype=np.float64)
            break
    if ref is None:
        return []
    nonzero = int(np.count_nonzero(np.nan_to_num(ref)))
    what = "None" if ctx.framework == Framework.TF else "None (or nothing)"
    return [
        ctx.finding(
            "GV105-grad-missing",
            "error",
            f"The custom backward gives {what} for '{t.name}', but its {ref_mode} gradient is nonzero "
            f"at {nonzero} of {ref.size} elements, so '{t.name}' gets no gradient at all.",
            f"Return the gradient of '{t.name}' from backward instead of None (None is only right "
            "for inputs that do not need a gradient).",
            ctx.backward_where(),
            tensor=t.name,
        )
    ]


def _shape(shape) -> str:
    shape = tuple(int(s) for s in shape)
    return (
        "()" if not shape else "(" + ", ".join(map(str, shape)) + (",)" if len(shape) == 1 else ")")
    )
