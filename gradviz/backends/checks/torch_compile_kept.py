"""The torch `compiled` check's compiled function, kept per op between runs of a worker.

Dynamo tracing and the aot_eager compile were ~80 of the check's 83 ms per run, paid again each
run because `torch._dynamo.reset()` dropped everything. A Function's or custom_op's call holds no
state of its own (the built op is the user's class or function, the same object while its module
is the one loaded), so the compiled call of one run serves the next run of the same op, module,
dtype, device, argument layout and literal constants; Dynamo's own guards still decide, call by
call, whether the traced graph holds (tensor shapes, dtypes, strides, the globals it read) and
trace again where not. A Module or Layer is built afresh each run with state of its own: it is
compiled per run as before, after a reset. Each kept entry has a code object of its own, so
Dynamo's recompile limit (8 per code object, beyond which it runs the code eagerly without a
word, and the check would compare eager with eager) is never shared between ops.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

KEPT_MAX = 16  # ops: past it (or when an op's module is replaced) everything is dropped
_LITERALS = (bool, int, float, complex, str, bytes, type(None))
_counter = [0]


@dataclass
class Kept:
    obj: Any  # the user's Function / custom_op: held, so the key's id() stays its
    key: tuple
    fn: Callable  # the torch.compile'd call
    note: str  # the graph-break note of its compile ("" for one graph)


_kept: dict[tuple, Kept] = {}  # (file, qualname, key) -> its compiled call


def _literal(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_literal(v) for v in value)
    return isinstance(value, _LITERALS)


def key_of(
    ctx, dtype: str, shapes: tuple, kinds: tuple = ("function", "custom_op"), extra: tuple = ()
) -> tuple | None:
    """What the kept compiled call depends on besides what the compiler guards; None where the
    op cannot be kept (a Module or Layer, or a constant whose repr might not say its value).
    `kinds`: the op kinds whose built op holds no state; `extra`: what else the trace bakes in."""
    if ctx.info.kind not in kinds:
        return None
    plans = []
    for p in ctx.plans:
        if p.kind == "const" and not _literal(p.const):
            return None
        plans.append(
            (p.name, p.kind, p.keyword, (type(p.const).__name__, repr(p.const)))
            if p.kind == "const"
            else (p.name, p.kind, p.keyword)
        )
    return (id(ctx.obj), ctx.info.kind, dtype, str(ctx.device), tuple(plans), shapes, extra)


def find(ctx, key: tuple | None) -> Kept | None:
    if key is None:
        return None
    hit = _kept.get((ctx.info.file, ctx.info.qualname, key))
    return hit if hit is not None and hit.obj is ctx.obj else None


def keep(ctx, key: tuple, fn: Callable, note: str) -> None:
    replaced = any(
        (f, q) == (ctx.info.file, ctx.info.qualname) and k.obj is not ctx.obj
        for (f, q, _), k in _kept.items()
    )
    if replaced or len(_kept) >= KEPT_MAX:
        drop_all()  # a replaced module's compiled code goes with it
    _kept[(ctx.info.file, ctx.info.qualname, key)] = Kept(ctx.obj, key, fn, note)


def drop_all() -> None:
    import torch

    _kept.clear()
    torch._dynamo.reset()


def slim(ctx):
    """The check's context holding only what a kept trace calls (its plans without their
    values, the settings for the upstream): not the run's arrays, which would stay alive."""
    from dataclasses import replace

    plans = [replace(p, values=None) for p in ctx.plans]
    return replace(ctx, plans=plans, tensors={}, numeric_infos={}, graph=None)


def keep_in(store: dict, where: tuple, entry: tuple) -> None:
    """A TF trace into `store` ((file, qualname, key) -> (the user's op, ...)); a replaced
    module's traces, or all past KEPT_MAX, go."""
    replaced = any(k[:2] == where[:2] and v[0] is not entry[0] for k, v in store.items())
    if replaced or len(store) >= KEPT_MAX:
        store.clear()
    store[where] = entry


def own_code(fn: Callable) -> Callable:
    """`fn` with a code object of its own (Dynamo keeps compiled code and counts recompiles per
    code object; closures of one `def` share theirs)."""
    _counter[0] += 1
    code = fn.__code__.replace(co_name=f"{fn.__code__.co_name}_{_counter[0]}")
    return types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__, fn.__closure__)
