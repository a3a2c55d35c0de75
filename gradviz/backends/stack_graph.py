"""The `stack` graph: x -> [dense_i -> op] for i = 1..N -> loss = sum(upstream * o_N).

Gradient flow through depth: every layer's dense input `h{i}` and op output `o{i}` is recorded,
so the gradient reaching each layer can be compared per mode. Weights follow the mlp graph's
scheme (standard normal / sqrt(d), biases * 0.1, one seeded stream per name), identical in both
frameworks. The op is one instance called at every layer: a Module's / Layer's own parameters are
shared by the layers (their gradient sums over the layers), as when one activation module is
reused through a network.
"""

from __future__ import annotations

import numpy as np

from gradviz.backends.graphs import (
    Graph,
    GraphMismatch,
    Leaf,
    _args_from,
    input_values,
    require_float_first,
)
from gradviz.model import DEPTH_RANGE
from gradviz.seeds import dense_bias, dense_weight, upstream_values


def stack_weights(seed: int, depth: int, d: int) -> list[Leaf]:
    """w{i} (d x d) and b{i} (d,) of every layer, the same numbers in both frameworks."""
    leaves = []
    for i in range(1, depth + 1):
        leaves.append(Leaf(f"w{i}", "param", dense_weight(seed, f"w{i}", d)))
        leaves.append(Leaf(f"b{i}", "param", dense_bias(seed, f"b{i}", d)))
    return leaves


def stack_graph(settings, plans) -> Graph:
    depth = int(settings.depth)
    lo, hi = DEPTH_RANGE
    if not lo <= depth <= hi:
        raise ValueError(f"depth {depth}: the stack graph takes {lo} to {hi} layers")
    first = next(p for p in plans if p.kind == "tensor")
    require_float_first(settings, first)
    shape = tuple(first.values.shape) or (1,)
    d = shape[-1]
    others = [p for p in plans if p.kind == "tensor" and p is not first]
    leaves = [Leaf("x", "input", input_values(settings.seed, "x", shape, settings.input_range))]
    leaves += [Leaf(p.name, "input", p.values) for p in others]
    leaves += stack_weights(settings.seed, depth, d)
    upstream: list[np.ndarray] = []

    def forward(tensors, call_op, rec, F):
        o = tensors["x"]
        for i in range(1, depth + 1):
            h = rec(f"h{i}", F.dense(o, tensors[f"w{i}"], tensors[f"b{i}"]), "intermediate")
            o = call_op(*_args_from(plans, tensors, first_from=h))[0]
            if F.shape(o) != F.shape(h):
                raise GraphMismatch(
                    f"the stack graph needs an op that keeps the shape of its input: it gets "
                    f"{shape} and returns {F.shape(o)}; use the op or seed graph for this op"
                )
            o = rec(f"o{i}", o, "output" if i == depth else "intermediate")
        if not upstream:
            upstream.append(upstream_values(settings, "out", shape))
        return F.weighted_sum(F.const(upstream[0], o), o)

    # the flow is read at h{i}: its numeric reference comes before the weights' and biases'
    return Graph(
        leaves,
        forward,
        numeric_first=tuple(f"h{i}" for i in range(depth, 0, -1)),
        recorded=r"[ho]\d+",
    )
