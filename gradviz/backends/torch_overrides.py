"""Removing custom backward passes for the `default` mode, wherever they live (torch). Worker-only.

DESIGN.md: `default` is torch's own autodiff of the same forward, whether the override is the op
itself, a subclass of a Function imported from a package, or a Function that some other module
the op calls applies. For the length of one default run, every autograd.Function that is not
torch's own gets an `apply` that runs its forward directly (under autograd), and the bound
`Fn.apply` aliases modules keep (`revgrad = RevGrad.apply`) are swapped where they are
(torch_aliases finds them, keeping what it read of each module). Afterwards everything is
restored. What the op's code reads during the run (a module imported then binding
`op = Fn.apply`, a cache filled on first use) is a StandIn, which runs the forward directly only
while a default run is on in its thread and is the real `apply` otherwise: a reference to it kept
anywhere never turns a later custom run into the default gradient. An override gradviz cannot
reach (a bound method kept in a list before the run, a closure) is found in the resulting graph
and reported, never silently kept.
"""

from __future__ import annotations

import contextlib
import types
from threading import get_ident

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
    return (
        isinstance(cls, type)
        and issubclass(cls, torch.autograd.Function)
        and cls.__module__.split(".")[0] not in _FRAMEWORK_PREFIXES
        and bool({"backward", "vjp"} & own_attrs(cls))
    )


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


# thread id -> how many default runs are on in it; a StandIn is the default only where one is
_ACTIVE: dict[int, int] = {}


class StandIn:
    """`Fn.apply` (or an alias of it) as code sees it during a default run: the forward called
    directly while a default run is on in this thread, else the real apply it stands for, so a
    reference taken during the run and kept (a module global, a list, a closure, a partial)
    behaves as the real one afterwards. Attributes (`__self__`, `__func__`, `__name__`...),
    equality and hashing are the real apply's."""

    __slots__ = ("_real", "_direct")

    def __init__(self, cls, real):
        self._real = real
        self._direct = default_apply(cls)

    def __call__(self, *args, **kwargs):
        if _ACTIVE and _ACTIVE.get(get_ident()):
            return self._direct(*args, **kwargs)
        return self._real(*args, **kwargs)

    def __getattr__(self, name):
        if name in StandIn.__slots__:  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self._real, name)

    def __eq__(self, other):
        return self._real == (other._real if type(other) is StandIn else other)

    def __hash__(self):
        return hash(self._real)

    def __repr__(self):
        return f"<gradviz default-mode stand-in for {self._real!r}>"


class _StandInApply:
    """Put in place of `cls.apply` for a default run: reading `apply` through any class below
    it (one defined during the run included) gives a StandIn for that class, whose real apply is
    the one the class would resolve without gradviz's (`_real_apply`)."""

    __slots__ = ("original", "_made")

    def __init__(self, original):
        self.original = original  # what vars(cls) held under "apply", or None
        self._made: dict[type, StandIn] = {}

    def __get__(self, obj, owner=None):
        owner = type(obj) if owner is None else owner
        made = self._made.get(owner)
        if made is None:
            made = self._made[owner] = StandIn(owner, _real_apply(owner))
        return made


def _real_apply(cls):
    for klass in cls.__mro__:
        found = vars(klass).get("apply")
        while isinstance(found, _StandInApply):
            found = found.original
        if found is not None:
            return found.__get__(None, cls)
    raise AttributeError(f"{cls.__qualname__} has no apply")


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
    return type(obj) is types.MethodType and obj.__func__ is _APPLY and is_override(obj.__self__)


_ALIASES = AliasIndex(_is_bound_apply, _FRAMEWORK_PREFIXES)
_patched: set = set()  # the classes the last default run gave a StandIn apply


@contextlib.contextmanager
def functions_as_default():
    """Within: every non-torch Function runs its forward directly; restored on exit."""
    global _patched
    classes = [(cls, vars(cls).get("apply")) for cls in _all_overrides()]
    aliases = _ALIASES.find()
    me = get_ident()
    try:
        for cls, old in classes:
            cls.apply = _StandInApply(old)
        for mod, attr, obj in aliases:
            setattr(mod, attr, StandIn(obj.__self__, obj))
        _patched = {cls for cls, _ in classes}
        _ACTIVE[me] = _ACTIVE.get(me, 0) + 1
        yield
    finally:
        depth = _ACTIVE.pop(me, 1) - 1
        if depth > 0:
            _ACTIVE[me] = depth
        for mod, attr, obj in reversed(aliases):
            setattr(mod, attr, obj)
        for cls, old in reversed(classes):
            if old is not None:
                cls.apply = old
            else:
                del cls.apply


def aliases_missed() -> bool:
    """After a default run that kept a custom backward: would building the mode again remove it?
    Yes when a fresh look at every module finds an alias the last swap did not have (one bound
    since its module was last read: torch_aliases), or when a Function with its own backward
    now exists that the last run did not give a StandIn (defined during it, in a module first
    imported then)."""
    missed = _ALIASES.missed()
    return missed or any(cls not in _patched for cls in _all_overrides())


def kept_message(names: list[str]) -> str:
    return (
        f"{OVERRIDE_KEPT} for the default mode: {', '.join(names)} still ran its custom "
        "backward (called through a reference gradviz cannot swap, such as a bound .apply "
        "kept in a list or a closure)"
    )


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


@contextlib.contextmanager
def custom_backwards_seen():
    """Within: the names of the Functions outside torch whose backward autograd ran (and of the
    autograd formulas registered for a torch.library.custom_op, which torch wraps in a Function
    of its own), into the list yielded; None where this torch has no such entry point to watch
    (nothing can be said then). Autograd calls every Python Function's backward through
    BackwardCFunction.apply; the wrapper only records and calls it."""
    from torch.autograd.function import BackwardCFunction

    original = vars(BackwardCFunction).get("apply")
    if original is None:
        yield None
        return
    seen: list = []

    def apply(self, *args):
        cls = getattr(self, "_forward_cls", None)
        if cls is not None and (is_override(cls) or cls.__module__.startswith("torch._library")):
            seen.append(f"{cls.__module__}.{cls.__qualname__}")
        return original(self, *args)

    BackwardCFunction.apply = apply
    try:
        yield seen
    finally:
        BackwardCFunction.apply = original
