"""Gradient flow through depth: per layer of a `stack` run, the L2 norm of the gradient at the
layer's input h{i}, per mode (numpy only; shared by the JSON report, the terminal and the plots).

A mode's norm is None where that gradient does not exist (TF None, a cut graph, a mode that
raised, or a numeric reference obtained by projections, which gives no per-element gradient).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from gradviz.model import MODES, RunResult
from gradviz.vocab import Mode


def layer_count(result: RunResult) -> int:
    """Layers of a stack run: the h{i} tensors it recorded (0 for other graphs)."""
    if result.request.settings.graph != "stack":
        return 0
    names = {t.name for t in result.tensors}
    n = 0
    while f"h{n + 1}" in names:
        n += 1
    return n


def modes_of(result: RunResult) -> tuple[str, ...]:
    return tuple(m for m in MODES if m in result.request.settings.modes)


def l2(g) -> Optional[float]:
    if g is None:
        return None
    return float(np.sqrt(np.sum(np.square(np.asarray(g, dtype=np.float64)))))


NOT_COMPUTED = "not computed"      # prefix of an absent norm that says nothing about the flow


def _why_absent(result: RunResult, t, mode: str) -> str:
    if mode in result.mode_errors:
        return f"{NOT_COMPUTED}: the {mode} mode raised"
    if mode == Mode.NUMERIC and (t.numeric is None or t.numeric.method != "full"):
        method = t.numeric.method if t.numeric is not None else "not run"
        return f"{NOT_COMPUTED}: numeric reference {method} (no per-element gradient)"
    return t.absent.get(mode) or "no gradient"


def flow_of(result: RunResult) -> list[dict]:
    """[{"layer": i, "tensor": "h{i}", "norm": {mode: float | None}, "absent": {mode: why}}] for
    i = 1..N, input side first; [] for a run of another graph or one without tensors. `absent`
    names only the modes whose norm is None."""
    modes = modes_of(result)
    out = []
    for i in range(1, layer_count(result) + 1):
        t = result.tensor(f"h{i}")
        norm = {m: l2(t.grads.get(m)) for m in modes}
        absent = {m: _why_absent(result, t, m) for m in modes if norm[m] is None}
        out.append({"layer": i, "tensor": f"h{i}", "norm": norm, "absent": absent})
    return out


def dies_at(flow: list[dict], mode: str) -> Optional[int]:
    """The first layer seen from the loss (top layer down) where `mode`'s gradient is zero or
    does not exist: no layer below it gets anything from the loss through it. None when the
    gradient is alive down to layer 1, or when the mode's norms were not computed there."""
    for row in reversed(flow):
        if mode not in row["norm"]:
            return None
        n = row["norm"][mode]
        if n == 0.0:
            return row["layer"]
        if n is None:
            why = row.get("absent", {}).get(mode, "")
            return None if why.startswith(NOT_COMPUTED) else row["layer"]
    return None
