"""The dtype each custom backward returned, before autograd casts it.

PyTorch's engine casts what an `autograd.Function.backward` returns to its input's dtype
(validate_outputs) before any hook or `.grad` sees it: a backward that returns bfloat16 for a
float32 input arrives as float32 with bfloat16's rounding in it, one that returns float64 as
float32, and the report cannot say why. The engine calls each custom node through its `apply`
attribute, so a pass-through wrapper set on the node (not on the class: other graphs are not
touched) sees the returned tensors themselves. Only gradients that go straight to a tensor the
run reports are named (a leaf's AccumulateGrad, or a recorded tensor's own grad_fn)."""

from __future__ import annotations

import torch
from torch.autograd.function import BackwardCFunction

_GRAPH_MAX = 100_000  # nodes walked at most: a deep user graph is not walked without bound


def watch(loss, targets: list) -> dict:
    """{name: dtype name} filled while the backward of `loss` runs, for each target (name,
    tensor, role) a custom backward returned a gradient of another dtype than its own."""
    found: dict[str, str] = {}
    if not torch.is_tensor(loss) or loss.grad_fn is None:
        return found
    by_leaf = {id(t): (n, t.dtype) for n, t, _ in targets if t.is_leaf}
    by_edge = {
        (id(t.grad_fn), t.output_nr): (n, t.dtype)
        for n, t, _ in targets
        if not t.is_leaf and t.grad_fn is not None
    }
    for node in _custom_nodes(loss.grad_fn):
        names = []
        for edge, nr in node.next_functions:
            if edge is None:
                names.append(None)
            elif hasattr(edge, "variable"):
                names.append(by_leaf.get(id(edge.variable)))
            else:
                names.append(by_edge.get((id(edge), nr)))
        if any(names):
            node.apply = _recording(node.apply, names, found)
    return found


def _custom_nodes(root):
    seen, stack, out = {id(root)}, [root], []
    while stack and len(seen) < _GRAPH_MAX:
        node = stack.pop()
        if isinstance(node, BackwardCFunction):
            out.append(node)
        for nxt, _ in getattr(node, "next_functions", ()):
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    return out


def _recording(apply, names: list, found: dict):
    def recorded(*grads):
        out = apply(*grads)
        for named, g in zip(names, out if isinstance(out, tuple) else (out,)):
            if named is not None and torch.is_tensor(g) and g.dtype != named[1]:
                found[named[0]] = str(g.dtype).removeprefix("torch.")
        return out

    return recorded
