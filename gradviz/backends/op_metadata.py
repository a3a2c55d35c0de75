"""Whether an op's `@gradviz.op` metadata fits its forward: `inputs=` and `consts=` name the
forward's arguments (inputs= also a Module's / Layer's parameters), `reference=` takes them.

Metadata that does not fit was ignored: the name a user misspelt got a seeded tensor of the default
shape, or its signature default, and the run looked fine. It is an error at the line that gives
the metadata (the `@gradviz.op(...)` decorator, or `gradviz.op(...)(Imported)`), listing what the
forward has. Decided at load where the forward's signature alone decides it (listed as a note),
and at the run (an error) once the built op's parameters are known too.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable

from gradviz.errors import GradvizError

LAYER_KINDS = ("module", "layer")  # ops built as objects: inputs= may name their parameters


class MetadataMismatch(GradvizError, ValueError):
    """Metadata naming what the op does not have; `where` is the line that gives it."""

    def __init__(self, message: str, where: str):
        super().__init__(message)
        self.where = where


def with_given(meta: dict, given) -> dict:
    """The op's metadata with a caller's own inputs and constants (model.GivenArgs, from
    gradviz.testing) in place of those it names: the tensors a test built are the ones run."""
    if given is None:
        return meta
    inputs = {**(meta.get("inputs") or {}), **dict(given.inputs)}
    consts = {**(meta.get("consts") or {}), **dict(given.consts)}
    for name in dict(given.inputs):
        consts.pop(name, None)
    for name in dict(given.consts):
        inputs.pop(name, None)
    return {**meta, "inputs": inputs, "consts": consts}


def meta_where(meta: dict, fallback: str) -> str:
    """The line that gave the metadata (api.op records it), else the op's own line."""
    return meta.get("where") or fallback


def takes_any_keyword(params: Iterable[inspect.Parameter]) -> bool:
    return any(p.kind == p.VAR_KEYWORD for p in params)


def _named(params) -> list[str]:
    return [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _has(names: list[str], params) -> str:
    extra = [
        f"*{p.name}" if p.kind == p.VAR_POSITIONAL else f"**{p.name}"
        for p in params
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    shown = ", ".join(names + extra)
    return f"its forward takes {shown}" if shown else "its forward takes no arguments"


def unknown_names(
    meta: dict, params: list[inspect.Parameter], kind: str, param_names: Iterable[str] | None = None
) -> str | None:
    """The message for metadata naming no argument of the forward (`params`, as declared:
    without ctx / self), or None when it fits. For a Module / Layer, inputs= may name a
    parameter too: decided only when `param_names` (every parameter of the built op) is given,
    else left to the run. A forward taking **kwargs takes any name as an argument."""
    if takes_any_keyword(params):
        return None
    args = _named(params)
    wrong = [("consts", n) for n in meta.get("consts") or {} if n not in args]
    for n in meta.get("inputs") or {}:
        if n in args:
            continue
        if kind in LAYER_KINDS and param_names is None:
            continue  # maybe a parameter: the run decides
        if kind not in LAYER_KINDS or n not in set(param_names or ()):
            wrong.append(("inputs", n))
    if not wrong:
        return None
    what = "; ".join(
        f"{key}= names {', '.join(repr(n) for k, n in wrong if k == key)}"
        for key in dict.fromkeys(k for k, _ in wrong)
    )
    has = _has(args, params)
    if kind in LAYER_KINDS and any(k == "inputs" for k, _ in wrong):
        shown = ", ".join(param_names or ()) or "none"
        has += f", and its parameters are {shown}"
    return f"gradviz.op metadata does not fit the op: {what}, which it does not have ({has})"


def unfit_parameters(inputs: dict, args: Iterable[str], param_names: Iterable[str]) -> str | None:
    """For a built Module / Layer: the message for inputs= naming neither an argument gradviz
    passes (`args`) nor a parameter of the built op (`param_names`), or None."""
    args, params = list(args), list(param_names)
    wrong = [n for n in inputs if n not in args and n not in params]
    if not wrong:
        return None
    return (
        f"gradviz.op metadata does not fit the op: inputs= names "
        f"{', '.join(repr(n) for n in wrong)}, which it does not have (its forward takes "
        f"{', '.join(args) or 'no arguments'}, and its parameters are "
        f"{', '.join(params) or 'none'})"
    )


def check_reference(meta: dict, plans, kind: str) -> str | None:
    """The message for a reference= that cannot be called as the op is (graphs.ArgPlan
    `plans`: tensors by position, constants by keyword), or None. A reference of a Module /
    Layer takes the built object first, as the forward takes self."""
    from gradviz.backends.graphs import _args_from

    reference = meta.get("reference")
    if reference is None:
        return None
    if not callable(reference):
        return f"gradviz.op(reference=...) takes a function, not {type(reference).__name__}"
    try:
        sig = inspect.signature(reference)
    except (TypeError, ValueError):
        return None  # a builtin or C function: nothing to read
    args, kwargs = _args_from(plans, {})
    first = ["self"] if kind in LAYER_KINDS else []
    try:
        sig.bind(*first, *args, **kwargs)
    except TypeError as exc:
        name = getattr(reference, "__qualname__", repr(reference))
        passed = [p.name for p in plans if p.kind != "default"]
        self_too = "the built object, then " if first else ""
        return (
            f"gradviz.op(reference={name}) cannot be called as the op is ({self_too}"
            f"{', '.join(passed) or 'no arguments'}): {exc}"
        )
    return None


def unfit_at_load(adapter, found, module) -> list[str]:
    """ "Name will not run: why (where)" for each op (OpInfo, object) of a file whose metadata
    its forward's signature alone shows not to fit (`gradviz list`, the window's problems)."""
    from gradviz.api import meta_of

    out = []
    for info, obj in found:
        meta = meta_of(obj, module)
        if not (meta.get("inputs") or meta.get("consts")):
            continue
        try:
            why = unknown_names(meta, adapter.declared_params(obj, info), info.kind)
        except (TypeError, ValueError):  # no signature to read: the run says what fails
            continue
        if why:
            out.append(f"{info.qualname} will not run: {why} (at {meta_where(meta, info.where)})")
    return out
