"""The override changed the forward, not only the backward: the custom output differs from the
reference (default) forward output (GV201)."""

from __future__ import annotations

import numpy as np

from gradviz.compare.metrics import fmt, pair_metrics, tolerances
from gradviz.diagnostics import jax_words, source
from gradviz.diagnostics.context import Context
from gradviz.vocab import Mode


def check(ctx: Context) -> list:
    outs = ctx.result.outputs
    c, d = outs.get(Mode.CUSTOM), outs.get(Mode.DEFAULT)
    if c is None or d is None:
        return []
    c, d = np.asarray(c, dtype=np.float64), np.asarray(d, dtype=np.float64)
    dtype = ctx.result.request.settings.dtype
    m = pair_metrics(c, d, tolerances(dtype))
    if m.allclose:
        return []
    if m.shape_mismatch:
        detail = f"has shape {tuple(c.shape)} where the reference forward gives {tuple(d.shape)}"
    else:
        i = m.worst_index
        at = (
            (
                f" (largest at element {i}: {fmt(float(c.reshape(-1)[i]))} vs "
                f"{fmt(float(d.reshape(-1)[i]))})"
            )
            if i is not None
            else ""
        )
        detail = (
            f"differs from the reference forward at {m.n_differ} of {m.n} elements, "
            f"max abs difference {fmt(m.max_abs_err)}{at}"
        )
    return [
        ctx.finding(
            "GV201-forward-changed",
            "warning",
            f"The custom op's forward output {detail}, so the override changed the forward, not "
            "only the backward.",
            jax_words.say(
                ctx,
                "forward",
                "Make the custom forward compute exactly what the reference forward computes (or "
                "fix the reference= given to @gradviz.op); change only the gradient in backward.",
            ),
            jax_words.forward_where(ctx)
            or source.line_of(ctx.file, ctx.forward())
            or ctx.op_where(),
            tensor="out",
        )
    ]
