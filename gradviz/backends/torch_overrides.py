"""Removing custom backward passes for the `default` mode, wherever they live (torch). Worker-only.

DESIGN.md: `default` is torch's own autodiff of the same forward, whether the override is the op
itself, a subclass of a Function imported from a package, or a Function that some other module
the op calls applies. For the length of one default run, every autograd.Function that is not
torch's own runs its forward directly (under autograd) instead of through `apply`, and the
bound `Fn.apply` aliases modules keep (`revgrad = RevGrad.apply`) are swapped where they are
(torch_aliases finds them, keeping what it read of each module). Afterwards everything is
restored. An override gradviz cannot reach (a bound method kept in a list, a closure) is found
in the resulting graph and reported, never silently kept.
"""
from __future__ import annotations

import contextlib
import types

import torch

from gradviz.backends.introspect import OverrideKept  # noqa: F401  (raised by the backend)
from gradviz.backends.torch_aliases import AliasIndex
from gradviz.model import OVERRIDE_KEPT

_APPLY = torch.autograd.Function.apply.__func__
_FRAMEWORK_PREFIXES = ("torch", "functorch")


def own_attrs(cls) -> set:
    names = set()
    for klass in cls.__mro__:
        if klass.__module__.split(".")[0] in _FRAMEWORK_PREFIXES:
            break
        names |= set(vars(klass))
    return names


def is_override(cls) -> bool:
    """A Function subclass outside torch that defines its own backward (or vjp)."""
    return (isinstance(cls, type) and issubclass(cls, torch.autograd.Function)
            and cls.__module__.split(".")[0] not in _FRAMEWORK_PREFIXES
            and bool({"backward", "vjp"} & own_attrs(cls)))


def uses_setup_context(cls) -> bool:
    return "setup_context" in own_attrs(cls)


class StandInCtx(torch.autograd.function.FunctionCtx):
    """The ctx a Function's forward gets when called directly for the default mode."""

    def __init__(self, args):
        super().__init__()
        self.needs_input_grad = tuple(torch.is_tensor(a) and a.requires_grad for a in args)

    def set_materialize_grads(self, value):
        pass


def default_apply(cls):
    """Call the Function's forward directly, so autograd differentiates it as written."""
    if uses_setup_context(cls):
        return lambda *args, **kwargs: cls.forward(*args, **kwargs)

    def apply(*args, **kwargs):
        return cls.forward(StandInCtx(args), *args, **kwargs)
    return apply


def _all_overrides() -> list[type]:
    out, stack, seen = [], list(torch.autograd.Function.__subclasses__()), set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        stack.extend(cls.__subclasses__())
        if is_override(cls):
            out.append(cls)
    return out


def _is_bound_apply(obj) -> bool:
    # a type test first: getattr on arbitrary module attributes can run code (lazy loaders)
    return (type(obj) is types.MethodType and obj.__func__ is _APPLY
            and is_override(obj.__self__))


_ALIASES = AliasIndex(_is_bound_apply, _FRAMEWORK_PREFIXES)


@contextlib.contextmanager
def functions_as_default():
    """Within: every non-torch Function runs its forward directly; restored on exit."""
    classes = [(cls, "apply" in vars(cls), vars(cls).get("apply")) for cls in _all_overrides()]
    aliases = _ALIASES.find()
    try:
        for cls, _, _ in classes:
            cls.apply = staticmethod(default_apply(cls))
        for mod, attr, obj in aliases:
            setattr(mod, attr, default_apply(obj.__self__))
        yield
    finally:
        for mod, attr, obj in reversed(aliases):
            setattr(mod, attr, obj)
        for cls, had, old in reversed(classes):
            if had:
                cls.apply = old
            else:
                del cls.apply


def aliases_missed() -> bool:
    """After a default run that kept a custom backward: does a fresh look at every module find an
    alias that the last swap did not have (one bound since its module was last read)? Building
    the mode again then swaps it (torch_aliases)."""
    return _ALIASES.missed()


def kept_message(names: list[str]) -> str:
    return (f"{OVERRIDE_KEPT} for the default mode: {', '.join(names)} still ran its custom "
            "backward (called through a reference gradviz cannot swap, such as a bound .apply "
            "kept in a list or a closure)")


def overrides_in_graph(roots) -> list[str]:
    """Names of non-torch Functions whose backward nodes are in the graph behind `roots`."""
    found, seen = [], set()
    stack = [r.grad_fn for r in roots if torch.is_tensor(r) and r.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        cls = getattr(node, "_forward_cls", None)
        if cls is not None and is_override(cls):
            name = f"{cls.__module__}.{cls.__qualname__}"
            if name not in found:
                found.append(name)
        stack.extend(fn for fn, _ in getattr(node, "next_functions", ()))
    return found
