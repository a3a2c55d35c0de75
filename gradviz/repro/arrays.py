"""The arrays a reproduction script holds, rebuilt in the parent from the run's result and its
seeds (numpy only): the graph's leaves and the op's own parameters as the run fed them, the
float64 values the numeric reference perturbed, the loss's weights and each recorded tensor's
value in the run (the numeric steps of an intermediate are sized by it)."""

from __future__ import annotations

import numpy as np

from gradviz.model import RunResult
from gradviz.seeds import (
    dense_bias,
    dense_weight,
    input_draw,
    mlp_target,
    param_draw,
    upstream_values,
)


def graph_params(graph: str, depth: int) -> set[str]:
    """The graph's own parameters (role "param" in the result, but no parameter of the op)."""
    if graph == "seed":
        return {"a"}
    if graph == "mlp":
        return {"w1", "b1", "w2", "b2"}
    if graph == "stack":
        return {f"{k}{i}" for i in range(1, depth + 1) for k in "wb"}
    return set()


def first_tensor(r: RunResult) -> str:
    """The op's first tensor argument: the seed, mlp and stack graphs feed it a tensor of their own."""
    return next((name for name, kind, _, _ in r.call if kind == "tensor"), "")


def _draws(r: RunResult, name: str, role: str, shape: tuple) -> list[np.ndarray]:
    """The float64 draws gradviz may have made of a tensor of this name (the graphs' rules)."""
    s = r.request.settings
    if role == "input":
        return [input_draw(s.seed, name, shape, s.input_range)]
    if s.graph == "seed" and name == "a":
        return [input_draw(s.seed, first_tensor(r), shape, s.input_range)]
    if name in graph_params(s.graph, int(s.depth)) and shape:
        return [
            dense_weight(s.seed, name, shape[-1])
            if name[0] == "w"
            else dense_bias(s.seed, name, shape[-1])
        ]
    return [param_draw(s.seed, name, shape)]


def _float64(r: RunResult, name: str, role: str, value: np.ndarray) -> np.ndarray:
    """The float64 values the numeric pass perturbed: the seeded draw where the run's value is
    its rounding, else the run's value itself (explicit inputs= values)."""
    if value.dtype == np.float64:
        return value
    for drawn in _draws(r, name, role, value.shape):
        if drawn.shape == value.shape and np.array_equal(drawn.astype(value.dtype), value):
            return drawn
    return value.astype(np.float64)


def arrays(r: RunResult) -> dict[str, np.ndarray]:
    """ "leaf/NAME": the graph's inputs and own parameters (the run's dtype); "param/NAME": the
    op's trainable parameters; "leaf64/", "param64/": the float64 values behind them (an int / bool leaf as it is);
    "upstream/NAME": each weighed output's weight (op, stack); "target/y": the mlp's target;
    "value/NAME": each recorded tensor's value in the run."""
    s = r.request.settings
    ours = graph_params(s.graph, int(s.depth))
    out = {}
    for t in r.tensors:
        if t.role == "input" or (t.role == "param" and t.name in ours):
            group = "leaf"
        elif t.role == "param":
            group = "frozen" if t.frozen else "param"
        else:
            continue
        value = out[f"{group}/{t.name}"] = np.asarray(t.value)
        if value.dtype.kind == "f" and group != "frozen":
            out[f"{group}64/{t.name}"] = _float64(r, t.name, t.role, value)
        elif group == "leaf":  # an int64 / bool input: the float64 loss takes it as it is
            out[f"leaf64/{t.name}"] = value
    for t in r.tensors:
        if t.role in ("output", "intermediate"):
            out[f"value/{t.name}"] = np.asarray(t.value)
    if s.graph == "op":
        for t in r.tensors:
            if t.role == "output":
                out[f"upstream/{t.name}"] = upstream_values(s, t.name, t.shape)
    elif s.graph == "stack":
        last = f"o{int(s.depth)}"
        shape = next(tuple(t.shape) for t in r.tensors if t.name == last)
        out[f"upstream/{last}"] = upstream_values(s, "out", shape)
    elif s.graph == "mlp":
        shape = next(tuple(t.shape) for t in r.tensors if t.name == "y")
        out["target/y"] = mlp_target(s.seed, shape)
    return out
