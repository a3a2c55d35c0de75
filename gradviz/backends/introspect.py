"""Reading user objects the same way in both backends: definition lines, constructors, outputs."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping

from gradviz.errors import GradvizError


class OpOutputError(GradvizError, TypeError):
    """The op's forward returned something that is not a tensor."""


class OverrideKept(GradvizError, RuntimeError):
    """A custom backward still ran in the default mode, so gradviz has no true default there.
    The message starts with model.OVERRIDE_KEPT. `again`: the swap missed an alias that a fresh
    look finds (torch_aliases), so the mode built and run again may have its true default."""

    def __init__(self, message: str, again: bool = False):
        super().__init__(message)
        self.again = again


def definition_line(obj) -> int:
    """The line a user sees as the definition: the `class` / `def` line, not its decorator."""
    try:
        lines, start = inspect.getsourcelines(obj)
    except (OSError, TypeError):
        return getattr(getattr(obj, "__code__", None), "co_firstlineno", 1)
    for offset, text in enumerate(lines):
        if text.lstrip().startswith(("class ", "def ", "async def ")):
            return start + offset
    return start


def where_of(obj, fallback: str = "") -> str:
    """'file:line' of `obj`'s definition in the file that defines it (an imported op's own
    package file, never the file that imported it); `fallback` when its source is unknown."""
    target = getattr(obj, "__func__", obj)
    try:
        path = inspect.getsourcefile(target)
    except TypeError:
        path = None
    if not path:
        return fallback
    return f"{os.path.abspath(path)}:{definition_line(target)}"


def no_arg_constructible(cls) -> bool:
    """An nn.Module / Layer that gradviz can build: every constructor argument has a default."""
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return True
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in list(sig.parameters.values())[1:]
    )


def tensors_of(out, is_tensor: Callable[[object], bool]) -> list:
    """The tensors an op returned: one tensor, or the tensors of a tuple/list, or the values of a
    dict in its order (a Module returning {"logits": ..., "aux": ...}, Hugging Face's
    ModelOutput); others dropped. They are named out, out1, ... by position."""
    if is_tensor(out):
        return [out]
    if isinstance(out, Mapping):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        tensors = [o for o in out if is_tensor(o)]
        if tensors:
            return tensors
    raise OpOutputError(
        f"the op returned {type(out).__name__}, not a tensor (or a tuple, list or dict of tensors)"
    )


def function_apply(fn):
    """fn.apply, refusing a dict: autograd.Function tracks the tensors its forward returns
    directly or in a tuple, not those in a dict, whose tensors are then cut from backward (the
    run read GV105 'gives None' for every input)."""

    def call(*args, **kwargs):
        out = fn.apply(*args, **kwargs)
        if isinstance(out, Mapping):
            raise OpOutputError(
                f"{fn.__name__}.forward returned a dict: an autograd.Function tracks only the "
                "tensors its forward returns directly or in a tuple, so those in the dict are cut "
                "from backward and no gradient reaches the inputs; return a tuple, and build the "
                "dict outside the Function (in a Module's forward)"
            )
        return out

    return call


def candidates(module, registered: list) -> list[tuple[str, object, bool]]:
    """(name in the file, object, registered?) for everything a file defines, imports, or names
    with gradviz.op(...)(obj); each object once, under its first name."""
    reg = {id(o) for o, _ in registered}
    out, seen = [], set()
    items = list(vars(module).items()) + [(getattr(o, "__name__", "op"), o) for o, _ in registered]
    for name, obj in items:
        if id(obj) in seen or name.startswith("__"):
            continue
        seen.add(id(obj))
        out.append((name, obj, id(obj) in reg))
    return out


def defined_at(obj, module) -> str:
    """'file:line' of an object defined outside `module`; "" for the module's own."""
    if getattr(obj, "__module__", None) == module.__name__:
        return ""
    return where_of(getattr(obj, "__wrapped__", obj))


def obj_is_own(obj, module) -> bool:
    return getattr(obj, "__module__", None) == module.__name__
