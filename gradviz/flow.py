"""Gradient flow through depth: per layer of a `stack` run, the L2 norm of the gradient at the
layer's input h{i}, per mode (numpy only; shared by the JSON report, the terminal and the plots).

A mode's norm is None where that gradient does not exist (TF None, a cut graph, a mode that
raised, or a numeric reference obtained by projections, which gives no per-element gradient).
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


def l2(g) -> float | None:
    if g is None:
        return None
    return float(np.sqrt(np.sum(np.square(np.asarray(g, dtype=np.float64)))))


NOT_COMPUTED = "not computed"  # prefix of an absent norm that says nothing about the flow


def _why_absent(result: RunResult, t, mode: str) -> str:
    if mode in result.mode_errors:
        return f"{NOT_COMPUTED}: the {mode} mode raised"
    if mode == Mode.NUMERIC and (t.numeric is None or t.numeric.method != "full"):
        method = t.numeric.method if t.numeric is not None else "not run"
        return f"{NOT_COMPUTED}: numeric reference {method} (no per-element gradient)"
    return t.absent.get(mode) or "no gradient"


@dataclass(frozen=True)
class FlowRow:
    """One layer of a stack run: the L2 norm per mode of the gradient at its input `tensor`
    (h{layer}); `absent` says why, for only the modes whose norm is None."""

    layer: int
    tensor: str
    norm: dict[str, float | None] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The row in the JSON report's "flow"."""
        return {
            "layer": self.layer,
            "tensor": self.tensor,
            "norm": dict(self.norm),
            "absent": dict(self.absent),
        }


def flow_of(result: RunResult) -> list[FlowRow]:
    """A FlowRow per layer i = 1..N, input side first; [] for a run of another graph or one
    without tensors."""
    modes = modes_of(result)
    out = []
    for i in range(1, layer_count(result) + 1):
        t = result.tensor(f"h{i}")
        norm = {m: l2(t.grads.get(m)) for m in modes}
        absent = {m: _why_absent(result, t, m) for m in modes if norm[m] is None}
        out.append(FlowRow(i, f"h{i}", norm, absent))
    return out


def dies_at(flow: list[FlowRow], mode: str) -> int | None:
    """The first layer seen from the loss (top layer down) where `mode`'s gradient is zero or
    does not exist: no layer below it gets anything from the loss through it. None when the
    gradient is alive down to layer 1, or when the mode's norms were not computed there."""
    for row in reversed(flow):
        if mode not in row.norm:
            return None
        n = row.norm[mode]
        if n == 0.0:
            return row.layer
        if n is None:
            why = row.absent.get(mode, "")
            return None if why.startswith(NOT_COMPUTED) else row.layer
    return None
