"""The small graphs built around an op, written once for both frameworks.

A graph is a list of leaves (seeded numpy values) and a forward function
`forward(leaves, call_op, rec, F) -> loss`. `rec(name, tensor, role)` marks a named intermediate
(the backends record it for gradients, or add a finite-difference perturbation to it), and `F`
holds the few framework functions the graphs need (sum, mean, dense).
"""
from __future__ import annotations

import inspect
import re
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from gradviz.model import RunSettings, parse_upstream

SEED_FACTOR = 23.0  # the classic check: c = b * 23, so a layer x*w gives a.grad == 23 * w


class GraphMismatch(ValueError):
    """The op does not fit the chosen graph (not a bug in the user's code)."""


@dataclass
class ArgPlan:
    name: str
    kind: str                       # "tensor" | "const" | "default" (left to the signature)
    values: Optional[np.ndarray] = None
    const: Any = None


@dataclass
class Leaf:
    name: str
    role: str                       # "input" | "param"
    values: np.ndarray


def rng_for(seed: int, name: str) -> np.random.Generator:
    """One seeded stream per tensor name: both frameworks draw identical numbers."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(name.encode())])


def input_values(seed: int, name: str, shape: tuple[int, ...],
                 bounds: tuple[float, float] = (-3.0, 3.0)) -> np.ndarray:
    return rng_for(seed, "input:" + name).uniform(bounds[0], bounds[1], size=shape)


def param_values(seed: int, name: str, shape: tuple[int, ...]) -> np.ndarray:
    # Positive and distinct: user parameters are often scales or step sizes.
    return rng_for(seed, "param:" + name).uniform(0.5, 1.5, size=shape)


def is_shape(spec) -> bool:
    return isinstance(spec, tuple) and all(isinstance(s, (int, np.integer)) for s in spec)


def plan_args(params: list[inspect.Parameter], meta: dict, settings: RunSettings) -> list[ArgPlan]:
    """Every forward argument: a const (metadata or signature default) or a seeded tensor."""
    consts, inputs = meta.get("consts") or {}, meta.get("inputs") or {}
    plans = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in consts:
            plans.append(ArgPlan(p.name, "const", const=consts[p.name]))
        elif p.name in inputs:
            plans.append(ArgPlan(p.name, "tensor", values=_spec_values(p.name, inputs[p.name],
                                                                       settings)))
        elif p.default is not p.empty:
            plans.append(ArgPlan(p.name, "default"))  # not passed: the signature default applies
        elif is_constant_annotation(p.annotation):
            raise ValueError(
                f"argument {p.name!r} is a constant (annotated {_annotation_text(p.annotation)}) "
                f"without a default: give its value with consts={{{p.name!r}: ...}} in "
                "@gradviz.op (or gradviz.op(consts=...)(Op) for an imported op)")
        else:
            plans.append(ArgPlan(p.name, "tensor", values=input_values(
                settings.seed, p.name, settings.shape, settings.input_range)))
    return plans


_CONSTANT_WORDS = {"int", "float", "bool", "str", "None", "Optional", "Union", "typing", "NoneType"}


def _annotation_text(annotation) -> str:
    return annotation if isinstance(annotation, str) else getattr(
        annotation, "__name__", None) or str(annotation)


def is_constant_annotation(annotation) -> bool:
    """int, float, bool, str, and Optional/Union of them (also as `from __future__` strings)."""
    if annotation is inspect.Parameter.empty:
        return False
    if annotation in (int, float, bool, str):
        return True
    words = set(re.findall(r"[A-Za-z_]\w*", _annotation_text(annotation).replace(".", " ")))
    return bool(words) and words <= _CONSTANT_WORDS and bool(words & {"int", "float", "bool", "str"})


def _spec_values(name: str, spec, settings: RunSettings) -> np.ndarray:
    """inputs= per argument: a shape, explicit values, or {"shape", "range"} (floats)."""
    if isinstance(spec, dict):
        unknown = set(spec) - {"shape", "range", "dtype"}
        if unknown:
            raise ValueError(f"inputs[{name!r}]: unknown keys {sorted(unknown)}; use shape, range")
        if spec.get("dtype", "float") not in ("float", "float32", "float64"):
            raise ValueError(f"inputs[{name!r}]: dtype {spec['dtype']!r} is not supported yet "
                             "(float inputs only)")
        shape = tuple(spec.get("shape", settings.shape))
        lo, hi = spec.get("range", settings.input_range)
        return input_values(settings.seed, name, shape, (float(lo), float(hi)))
    if is_shape(spec):
        return input_values(settings.seed, name, tuple(spec), settings.input_range)
    return np.asarray(spec, dtype=np.float64)


def upstream_values(settings: RunSettings, name: str, shape: tuple[int, ...]) -> np.ndarray:
    kind, k = parse_upstream(settings.upstream)
    if kind == "random":
        return rng_for(settings.seed, "upstream:" + name).standard_normal(shape)
    return np.full(shape, 1.0 if kind == "ones" else k)


@dataclass
class Graph:
    leaves: list[Leaf]
    forward: Callable          # forward(leaves: dict, call_op, rec, F) -> loss
    # tensors the numeric reference does first, before its time budget can run out (stack: h{i})
    numeric_first: tuple[str, ...] = ()


def build_graph(settings: RunSettings, plans: list[ArgPlan]) -> Graph:
    tensor_args = [p for p in plans if p.kind == "tensor"]
    if settings.graph != "op" and not tensor_args:
        raise ValueError(f"the {settings.graph!r} graph needs an op with at least one tensor argument")
    from gradviz.backends.stack_graph import stack_graph
    builder = {"op": _op_graph, "seed": _seed_graph, "mlp": _mlp_graph,
               "stack": stack_graph}.get(settings.graph)
    if builder is None:
        raise ValueError(f"unknown graph {settings.graph!r}: use op, seed, mlp or stack")
    return builder(settings, plans)


def _args_from(plans, tensors: dict, first_from=None) -> tuple[list, dict]:
    """Tensors positionally; consts, and everything after the first one, by keyword: TF counts
    every positional argument of a custom_gradient function as one needing a gradient."""
    args, kwargs, first_done = [], {}, False
    for p in plans:
        if p.kind == "tensor":
            value = tensors.get(p.name)
            if first_from is not None and not first_done:
                value, first_done = first_from, True
        if p.kind == "default":
            continue
        value = p.const if p.kind == "const" else value
        if kwargs or p.kind == "const":
            kwargs[p.name] = value
        else:
            args.append(value)
    return args, kwargs


def _record_outputs(outs, rec) -> list:
    names = ["out"] + [f"out{i}" for i in range(1, len(outs))]
    return [rec(n, o, "output") for n, o in zip(names, outs)]


def _op_graph(settings, plans):
    leaves = [Leaf(p.name, "input", p.values) for p in plans if p.kind == "tensor"]
    upstream: dict[int, np.ndarray] = {}
    # Outputs marked non-differentiable (or integer) stay out of the loss (DESIGN.md). Decided
    # on the first call that can tell (the custom mode, under autograd), then kept for every mode.
    skip: list = []

    def forward(tensors, call_op, rec, F):
        raw = call_op(*_args_from(plans, tensors))
        if not skip:
            marked = F.non_differentiable(raw)
            if marked is not None:  # never all of them: that op has no loss to differentiate
                skip.append(marked if len(marked) < len(raw) else set())
        dropped = skip[0] if skip else set()
        names = ["out"] + [f"out{i}" for i in range(1, len(raw))]
        outs = {i: rec(names[i], o, "output") for i, o in enumerate(raw) if i not in dropped}
        loss = 0.0
        for i, o in outs.items():
            if i not in upstream:
                name = "out" if i == 0 else f"out{i}"
                upstream[i] = upstream_values(settings, name, tuple(F.shape(o)))
            loss = loss + F.sum(F.const(upstream[i], o) * o)
        return loss

    return Graph(leaves, forward)


def _seed_graph(settings, plans):
    first = next(p for p in plans if p.kind == "tensor")
    leaves = [Leaf("a", "param", first.values)]
    leaves += [Leaf(p.name, "input", p.values) for p in plans if p.kind == "tensor" and p is not first]

    def forward(tensors, call_op, rec, F):
        outs = call_op(*_args_from(plans, tensors, first_from=tensors["a"]))
        b = rec("b", outs[0], "output")
        c = rec("c", b * SEED_FACTOR, "intermediate")
        return F.sum(c)

    return Graph(leaves, forward)


def _mlp_graph(settings, plans):
    first = next(p for p in plans if p.kind == "tensor")
    shape = tuple(first.values.shape) or (1,)
    d = shape[-1]
    seed = settings.seed
    scale = 1.0 / np.sqrt(d)
    leaves = [Leaf("x", "input", input_values(seed, "x", shape, settings.input_range)),
              Leaf("w1", "param", rng_for(seed, "param:w1").standard_normal((d, d)) * scale),
              Leaf("b1", "param", rng_for(seed, "param:b1").standard_normal((d,)) * 0.1)]
    others = [p for p in plans if p.kind == "tensor" and p is not first]
    leaves += [Leaf(p.name, "input", p.values) for p in others]
    leaves += [Leaf("w2", "param", rng_for(seed, "param:w2").standard_normal((d, d)) * scale),
               Leaf("b2", "param", rng_for(seed, "param:b2").standard_normal((d,)) * 0.1)]
    target = rng_for(seed, "target").standard_normal(shape)

    def forward(tensors, call_op, rec, F):
        h = rec("h", F.dense(tensors["x"], tensors["w1"], tensors["b1"]), "intermediate")
        out = rec("out", call_op(*_args_from(plans, tensors, first_from=h))[0], "output")
        if F.shape(out) != F.shape(h):
            raise GraphMismatch(
                f"the mlp graph needs an op that keeps the shape of its input: it gets {shape} "
                f"and returns {F.shape(out)}; use the op or seed graph for this op")
        y = rec("y", F.dense(out, tensors["w2"], tensors["b2"]), "intermediate")
        diff = y - F.const(target, y)
        return F.mean(diff * diff)

    return Graph(leaves, forward)
