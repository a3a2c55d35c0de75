"""The graphs gradviz builds around an op, by name (--graph op | seed | mlp | stack): the op
graph, the classic seed check and the small MLP here, the stack in stack_graph.py. The parts
they are made of (plans, leaves, Graph) are in graphs.py, which imports neither."""

from __future__ import annotations

import re

import numpy as np

from gradviz.backends.graphs import (
    SEED_FACTOR,
    ArgPlan,
    Graph,
    GraphMismatch,
    Leaf,
    _args_from,
    input_values,
    require_float_first,
)
from gradviz.backends.introspect import OpOutputError
from gradviz.backends.stack_graph import stack_graph
from gradviz.model import RunSettings
from gradviz.seeds import dense_bias, dense_weight, mlp_target, upstream_values


def build_graph(settings: RunSettings, plans: list[ArgPlan]) -> Graph:
    tensor_args = [p for p in plans if p.kind == "tensor"]
    if settings.graph != "op" and not tensor_args:
        raise ValueError(
            f"the {settings.graph!r} graph needs an op with at least one tensor argument"
        )
    builder = {"op": _op_graph, "seed": _seed_graph, "mlp": _mlp_graph, "stack": stack_graph}.get(
        settings.graph
    )
    if builder is None:
        raise ValueError(f"unknown graph {settings.graph!r}: use op, seed, mlp or stack")
    graph = builder(settings, plans)
    names = [leaf.name for leaf in graph.leaves]
    clash = sorted({n for n in names if names.count(n) > 1 or re.fullmatch(graph.recorded, n)})
    if clash:
        # an argument named as one of the graph's own tensors (the seed graph's `b`, the mlp's
        # `h`): one of the two gradients overwrote the other and the verdict read `differs`
        if settings.graph == "op":
            raise GraphMismatch(
                f"the op has an argument named {', '.join(clash)}, the name "
                "gradviz gives the op's output: rename the argument"
            )
        raise GraphMismatch(
            f"the {settings.graph} graph names its own tensors {_graph_names(graph)}, and the op "
            f"has an argument of the same name ({', '.join(clash)}): use the op graph for this op"
        )
    return graph


def _graph_names(graph) -> str:
    return {
        r"[bc]": "a, b, c",
        r"h|out|y": "x, w1, b1, h, out, w2, b2, y",
        r"[ho]\d+": "x, w{i}, b{i}, h{i}, o{i}",
    }.get(graph.recorded, "out, out1, ...")


def _op_graph(settings, plans):
    leaves = [Leaf(p.name, "input", p.values) for p in plans if p.kind == "tensor"]
    upstream: dict[int, np.ndarray] = {}
    # Outputs marked non-differentiable (or integer) stay out of the loss (DESIGN.md). Decided
    # on the first call that can tell (the custom mode, under autograd), then kept for every mode.
    skip: list = []

    def forward(tensors, call_op, rec, F):
        raw = call_op(*_args_from(plans, tensors))
        complex_out = [i for i, o in enumerate(raw) if "complex" in str(getattr(o, "dtype", ""))]
        if complex_out:  # read as "an integer or bool output" before
            raise OpOutputError(
                f"output {complex_out[0]} of the op is complex "
                f"({raw[complex_out[0]].dtype}); gradviz compares real gradients "
                "only: return its real and imaginary parts (.real, .imag)"
            )
        if not skip:
            marked = F.non_differentiable(raw)
            if marked is not None and raw and len(marked) == len(raw):
                raise OpOutputError(
                    f"every output of the op ({len(raw)}) is an integer or bool tensor or marked "
                    "non-differentiable: there is no loss to differentiate (return a float output "
                    "too, such as the straight-through value)"
                )
            if marked is not None:
                skip.append(marked)
        dropped = skip[0] if skip else set()
        names = ["out"] + [f"out{i}" for i in range(1, len(raw))]
        outs = {i: rec(names[i], o, "output") for i, o in enumerate(raw) if i not in dropped}
        loss = 0.0
        for i, o in outs.items():
            if i not in upstream:
                upstream[i] = upstream_values(settings, names[i], tuple(F.shape(o)))
                graph.loss_weights[names[i]] = upstream[i]
            loss = loss + F.weighted_sum(F.const(upstream[i], o), o)
        return loss

    graph = Graph(leaves, forward)
    return graph


def _seed_graph(settings, plans):
    first = next(p for p in plans if p.kind == "tensor")
    require_float_first(settings, first)
    leaves = [Leaf("a", "param", first.values)]
    leaves += [
        Leaf(p.name, "input", p.values) for p in plans if p.kind == "tensor" and p is not first
    ]

    def forward(tensors, call_op, rec, F):
        outs = call_op(*_args_from(plans, tensors, first_from=tensors["a"]))
        b = rec("b", outs[0], "output")
        c = rec("c", b * SEED_FACTOR, "intermediate")
        return F.sum(c)

    return Graph(leaves, forward, recorded=r"[bc]")


def _mlp_graph(settings, plans):
    first = next(p for p in plans if p.kind == "tensor")
    require_float_first(settings, first)
    shape = tuple(first.values.shape) or (1,)
    d = shape[-1]
    seed = settings.seed
    leaves = [
        Leaf("x", "input", input_values(seed, "x", shape, settings.input_range)),
        Leaf("w1", "param", dense_weight(seed, "w1", d)),
        Leaf("b1", "param", dense_bias(seed, "b1", d)),
    ]
    others = [p for p in plans if p.kind == "tensor" and p is not first]
    leaves += [Leaf(p.name, "input", p.values) for p in others]
    leaves += [
        Leaf("w2", "param", dense_weight(seed, "w2", d)),
        Leaf("b2", "param", dense_bias(seed, "b2", d)),
    ]
    target = mlp_target(seed, shape)

    def forward(tensors, call_op, rec, F):
        h = rec("h", F.dense(tensors["x"], tensors["w1"], tensors["b1"]), "intermediate")
        out = rec("out", call_op(*_args_from(plans, tensors, first_from=h))[0], "output")
        if F.shape(out) != F.shape(h):
            raise GraphMismatch(
                f"the mlp graph needs an op that keeps the shape of its input: it gets {shape} "
                f"and returns {F.shape(out)}; use the op or seed graph for this op"
            )
        y = rec("y", F.dense(out, tensors["w2"], tensors["b2"]), "intermediate")
        diff = y - F.const(target, y)
        return F.mean(diff * diff)

    return Graph(leaves, forward, recorded=r"h|out|y")
