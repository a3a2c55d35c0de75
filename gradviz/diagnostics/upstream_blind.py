"""A constant upstream that makes every gradient of an input zero (GV304): the loss sum(out)
does not change with it (softmax, sparsemax, a normalisation: outputs that sum to a constant),
so custom, default and numeric agree at 0 whatever the backward does for other upstreams. The
match is true of this loss and says nothing more; a random upstream checks the backward. Where
the run took the upstream probe (upstream_probe.probe_upstream: the op graph, small inputs) it did."""

from __future__ import annotations

import numpy as np

from gradviz.compare.metrics import tolerances
from gradviz.diagnostics.context import Context
from gradviz.vocab import Mode


def check(ctx: Context) -> list:
    s = ctx.result.request.settings
    if s.upstream != "ones" and not s.upstream.startswith("const:"):
        return []
    out = []
    for t in ctx.result.tensors:
        if t.role not in ("input", "param") or Mode.CUSTOM not in t.grads:
            continue
        comp = ctx.comparison_of(t.name)
        if comp is not None and comp.verdict != "match":
            continue
        if t.probe is not None:  # checked under a random upstream too (runner's probe)
            continue
        if _all_zero(t):
            out.append(
                ctx.finding(
                    "GV304-upstream-blind",
                    "warning",
                    f"With upstream {s.upstream} every gradient of '{t.name}' is 0 (custom, default and "
                    f"numeric alike): sum(upstream * out) does not change with '{t.name}', as when the "
                    "outputs sum to a constant (softmax, sparsemax, a normalisation), so this run "
                    f"cannot tell a right backward for '{t.name}' from a wrong one.",
                    f"Run it with a random upstream (--upstream random, or upstream: random in the "
                    f"settings) to check the backward of '{t.name}'.",
                    ctx.backward_where(),
                    tensor=t.name,
                )
            )
    return out


def _all_zero(t) -> bool:
    """custom, default (where present) and the numeric reference all 0 within tolerance."""
    numeric = t.grads.get(Mode.NUMERIC)
    if numeric is None and t.numeric is not None and t.numeric.method == "projection":
        numeric = t.numeric.projections.get(Mode.NUMERIC)
    if numeric is None:
        return False  # nothing says the true gradient is 0
    pairs = [(numeric, tolerances(t.dtype, numeric=True))]
    pairs += [
        (t.grads[m], tolerances(t.dtype)) for m in (Mode.CUSTOM, Mode.DEFAULT) if m in t.grads
    ]
    for g, tol in pairs:
        a = np.asarray(g, dtype=np.float64)
        if a.size == 0 or not np.all(np.isfinite(a)) or np.max(np.abs(a)) > tol.atol:
            return False
    return True
