"""The small graphs built around an op, written once for both frameworks.

A graph is a list of leaves (seeded numpy values) and a forward function
`forward(leaves, call_op, rec, F) -> loss`. `rec(name, tensor, role)` marks a named intermediate
(the backends record it for gradients, or add a finite-difference perturbation to it), and `F`
holds the few framework functions the graphs need (sum, mean, dense, weighted_sum).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradviz.errors import GradvizError
from gradviz.model import RunSettings
from gradviz.seeds import input_draw, param_draw, rng_for

SEED_FACTOR = 23.0  # the classic check: c = b * 23, so a layer x*w gives a.grad == 23 * w


class GraphMismatch(GradvizError, ValueError):
    """The op does not fit the chosen graph (not a bug in the user's code)."""


@dataclass
class ArgPlan:
    name: str
    kind: str  # "tensor" | "const" | "default" (left to the signature)
    values: np.ndarray | None = None
    const: Any = None
    keyword: bool = False  # passed by name: keyword-only, or through **kwargs


@dataclass
class Leaf:
    name: str
    role: str  # "input" | "param"
    values: np.ndarray


def input_values(
    seed: int, name: str, shape: tuple[int, ...], bounds: tuple[float, float] = (-3.0, 3.0)
) -> np.ndarray:
    key = (int(seed), name, tuple(int(n) for n in shape), float(bounds[0]), float(bounds[1]))
    kept = _drawn.get(key)
    if kept is None:
        kept = input_draw(seed, name, shape, bounds)
        if kept.nbytes > _DRAWN_BYTES:
            return kept
        if len(_drawn) >= _DRAWN_COUNT:
            del _drawn[next(iter(_drawn))]
        _drawn[key] = kept
    return kept.copy()  # the caller's own: nothing it does reaches the kept draw


# Seeding a generator for each input of each request took ~20 us per input in a hot loop and
# several times that in a worker; small inputs are kept by what draws them (the same numbers).
_DRAWN_BYTES, _DRAWN_COUNT = 1 << 16, 64
_drawn: dict[tuple, np.ndarray] = {}


def param_values(seed: int, name: str, shape: tuple[int, ...]) -> np.ndarray:
    return param_draw(seed, name, shape)


def is_shape(spec) -> bool:
    return isinstance(spec, tuple) and all(isinstance(s, (int, np.integer)) for s in spec)


def plan_args(
    params: list[inspect.Parameter],
    meta: dict,
    settings: RunSettings,
    declared: list[inspect.Parameter] | None = None,
) -> list[ArgPlan]:
    """Every forward argument: a const (metadata or signature default) or a seeded tensor.
    `params`: the arguments gradviz feeds; `declared`: every argument of the forward as written
    (a Keras call's `training` too, fed only when metadata names it). A forward taking **kwargs
    gets every other name of consts= and inputs= by keyword: any name fits it."""
    declared = params if declared is None else declared
    consts, inputs = meta.get("consts") or {}, meta.get("inputs") or {}
    fed = {p.name for p in params}
    plans = []
    for p in declared:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name not in fed and p.name not in consts and p.name not in inputs:
            continue
        keyword = p.kind == p.KEYWORD_ONLY
        if p.name in consts:
            plans.append(ArgPlan(p.name, "const", const=consts[p.name], keyword=keyword))
        elif p.name in inputs:
            plans.append(
                ArgPlan(
                    p.name,
                    "tensor",
                    values=_spec_values(p.name, inputs[p.name], settings),
                    keyword=keyword,
                )
            )
        elif p.default is not p.empty:
            plans.append(ArgPlan(p.name, "default"))  # not passed: the signature default applies
        elif is_constant_annotation(p.annotation):
            raise ValueError(
                f"argument {p.name!r} is a constant (annotated {_annotation_text(p.annotation)}) "
                f"without a default: give its value with consts={{{p.name!r}: ...}} in "
                "@gradviz.op (or gradviz.op(consts=...)(Op) for an imported op)"
            )
        else:
            plans.append(
                ArgPlan(
                    p.name,
                    "tensor",
                    values=input_values(
                        settings.seed, p.name, settings.shape, settings.input_range
                    ),
                    keyword=keyword,
                )
            )
    if any(p.kind == p.VAR_KEYWORD for p in declared):
        plans += _through_kwargs(declared, consts, inputs, settings)
    var = next((p for p in declared if p.kind == p.VAR_POSITIONAL), None)
    if var is not None and not any(pl.kind == "tensor" for pl in plans):
        raise ValueError(
            f"forward takes *{var.name}: gradviz cannot tell how many tensors to pass, so it "
            f"would call it with none; give the op named tensor arguments, or run it through a "
            f"Module or function whose forward names them (def forward(self, a, b): return "
            f"Op.apply(a, b))"
        )
    return plans


def _through_kwargs(declared, consts: dict, inputs: dict, settings: RunSettings) -> list[ArgPlan]:
    """Metadata names the signature does not list, passed through the forward's **kwargs."""
    named = {p.name for p in declared}
    out = [ArgPlan(n, "const", const=v, keyword=True) for n, v in consts.items() if n not in named]
    out += [
        ArgPlan(n, "tensor", values=_spec_values(n, spec, settings), keyword=True)
        for n, spec in inputs.items()
        if n not in named and n not in consts
    ]
    return out


_CONSTANT_WORDS = {"int", "float", "bool", "str", "None", "Optional", "Union", "typing", "NoneType"}


def _annotation_text(annotation) -> str:
    return (
        annotation
        if isinstance(annotation, str)
        else getattr(annotation, "__name__", None) or str(annotation)
    )


def is_constant_annotation(annotation) -> bool:
    """int, float, bool, str, and Optional/Union of them (also as `from __future__` strings)."""
    if annotation is inspect.Parameter.empty:
        return False
    if annotation in (int, float, bool, str):
        return True
    words = set(re.findall(r"[A-Za-z_]\w*", _annotation_text(annotation).replace(".", " ")))
    return (
        bool(words) and words <= _CONSTANT_WORDS and bool(words & {"int", "float", "bool", "str"})
    )


FLOAT_DTYPES = ("float", "float32", "float64")  # the run's --dtype applies
FIXED_DTYPES = ("int64", "bool")  # inputs without a gradient


def differentiable(values) -> bool:
    """Float values are differentiated; int64 and bool inputs are passed as they are."""
    return np.asarray(values).dtype.kind == "f"


def leaf_array(values) -> np.ndarray:
    """A leaf's values as numpy: float64, or int64 / bool kept as they are. Float64 values are
    not copied (each numeric direction went through here: a copy of 8 MB per 10^6 elements)."""
    arr = np.asarray(values)
    return arr if arr.dtype.kind in "bi" else np.asarray(arr, dtype=np.float64)


def _spec_values(name: str, spec, settings: RunSettings) -> np.ndarray:
    """inputs= per argument: a shape, explicit values, or {"shape", "range", "dtype"}."""
    if isinstance(spec, dict):
        return _dict_values(name, spec, settings)
    if is_shape(spec):
        return input_values(settings.seed, name, tuple(spec), settings.input_range)
    return _explicit_values(name, spec)


def _explicit_values(name: str, spec) -> np.ndarray:
    """Explicit values: bools stay bool; integers stay int64 when they come as an array with a
    dtype (numpy, torch, tf); a plain list of numbers is float ([0, 1, 2] is usually meant as x)."""
    arr = np.asarray(spec)
    if arr.dtype.kind == "c":  # astype(float64) dropped the imaginary part without a word
        raise ValueError(
            f"inputs[{name!r}]: complex values; gradviz feeds real tensors only: "
            "pass the real and imaginary parts as two inputs"
        )
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "iu" and hasattr(spec, "dtype"):
        return arr.astype(np.int64)
    return arr.astype(np.float64)


def _dict_values(name: str, spec: dict, settings: RunSettings) -> np.ndarray:
    unknown = set(spec) - {"shape", "range", "dtype"}
    if unknown:
        raise ValueError(
            f"inputs[{name!r}]: unknown keys {sorted(unknown)}; use shape, range, dtype"
        )
    dtype = spec.get("dtype", "float")
    if dtype not in FLOAT_DTYPES + FIXED_DTYPES:
        raise ValueError(
            f'inputs[{name!r}]: unknown dtype {dtype!r}; use "float", "int64" or "bool"'
        )
    shape = tuple(spec.get("shape", settings.shape))
    rng = rng_for(settings.seed, "input:" + name)
    if dtype == "bool":
        if "range" in spec:
            raise ValueError(f"inputs[{name!r}]: a bool input takes no range")
        return rng.random(shape) < 0.5
    if dtype == "int64":
        lo, hi = _int_range(name, spec)
        return rng.integers(lo, hi, size=shape, dtype=np.int64, endpoint=True)
    lo, hi = spec.get("range", settings.input_range)
    return input_values(settings.seed, name, shape, (float(lo), float(hi)))


def _int_range(name: str, spec: dict) -> tuple[int, int]:
    """An int64 input needs its range: no default fits both class indices and offsets."""
    if "range" not in spec:
        raise ValueError(
            f"inputs[{name!r}]: an int64 input needs a range (LO, HI), both "
            'included, e.g. {"dtype": "int64", "range": (0, 9)}'
        )
    try:
        lo, hi = spec["range"]
        ok = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (lo, hi))
    except (TypeError, ValueError):
        ok = False
    if not ok or lo > hi:
        raise ValueError(
            f"inputs[{name!r}]: the range of an int64 input is two integers "
            f"LO <= HI, got {spec['range']!r}"
        )
    return int(lo), int(hi)


def require_float_first(settings: RunSettings, first: ArgPlan) -> None:
    """The seed, mlp and stack graphs feed a float tensor of their own to the first argument."""
    if not differentiable(first.values):
        dtype = np.asarray(first.values).dtype
        raise ValueError(
            f"the {settings.graph} graph feeds its own float tensor to the op's first tensor "
            f"argument, but {first.name!r} has dtype {dtype}; use the op graph for this op (or "
            "put a float argument first)"
        )


@dataclass
class Graph:
    leaves: list[Leaf]
    forward: Callable  # forward(leaves: dict, call_op, rec, F) -> loss
    # tensors the numeric reference does first, before its time budget can run out (stack: h{i})
    numeric_first: tuple[str, ...] = ()
    # what an adapter made of the graph's arrays, kept for this graph's run and shared by its
    # modes (tf_arrays.HostArrays: each leaf and upstream gradient cast once, not per mode)
    prepared: dict = field(default_factory=dict)
    # the names the forward records (rec), as a regular expression: a layer's weight of such a
    # name (or of a leaf's) is shown as `self.NAME` (owns, BuiltBase.avoid_names)
    recorded: str = r"out\d*"
    # what the runner knows of the op, for checking inputs= against a built op's parameters:
    # the arguments passed, and whether inputs= may name its parameters (a Module / Layer
    # whose forward does not take **kwargs, which takes every name as an argument)
    args: tuple[str, ...] = ()
    check_params: bool = False
    # tensors the loss weighs directly and nothing after the op reads, by that weight (the op
    # graph's outputs and their upstream): a gradient there of more than its weight comes
    # through other outputs computed from it inside the op (numeric.py)
    loss_weights: dict = field(default_factory=dict)

    def owns(self, name: str) -> bool:
        return (
            any(leaf.name == name for leaf in self.leaves)
            or re.fullmatch(self.recorded, name) is not None
        )


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
        if kwargs or p.kind == "const" or p.keyword:
            kwargs[p.name] = value
        else:
            args.append(value)
    return args, kwargs
