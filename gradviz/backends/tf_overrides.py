"""Removing custom gradients for the `default` mode, wherever they live (TensorFlow). Worker-only.

DESIGN.md: `default` is TensorFlow's own autodiff of the same forward, whether the
`@tf.custom_gradient` function is the op itself, nested inside a Layer's `call` (decorated anew
on every call), defined in another module the op calls, or called inside a `tf.function`.

Every such function, however it is referred to, runs through
`tensorflow.python.ops.custom_gradient`'s eager and graph decorators at call time (or at trace
time, inside a tf.function); while a default run is on in the calling thread those two run the
undecorated forward `f(x)[0]` instead. A tf.function keeps what it traced, so one traced in a
custom run would give the default run its custom gradient, and one traced in a default run
would give every later custom run the default gradient. So during a default run each
tf.function call goes to a twin of it (`Function._clone`: the same Python function and options,
its own trace cache, kept per function for later default runs) traced with the override removed;
the user's function object never traces in a default run. What a tf.function traced outside the
twin still holds (a ConcreteFunction from `get_concrete_function`, one obtained during the run
too, which gradviz traces with the user's gradients; a loaded SavedModel; a
`gradient_override_map`) cannot be removed: every ConcreteFunction called eagerly during the
default run has its graph, nested functions included, read once for gradient overrides that are
not the framework's own, and the backend reports them (`take_kept`, model.OVERRIDE_KEPT) instead
of a default column that repeats custom. Custom gradients inside TensorFlow and Keras
themselves are part of the framework's autodiff and stay.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import weakref
from threading import get_ident

import tensorflow as tf
from tensorflow.python.eager import context as _context
from tensorflow.python.eager.polymorphic_function import concrete_function as _concrete
from tensorflow.python.eager.polymorphic_function import polymorphic_function as _poly
from tensorflow.python.ops import custom_gradient as _cg

from gradviz.backends.tf_graph_overrides import overrides_in
from gradviz.model import OVERRIDE_KEPT

_FRAMEWORK_DIRS = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep
    for m in (tf, _cg)
    if getattr(m, "__file__", None)
)


def _framework_dirs() -> tuple[str, ...]:
    dirs = list(_FRAMEWORK_DIRS)
    for name in ("keras", "tf_keras"):
        mod = sys.modules.get(name)
        if getattr(mod, "__file__", None):
            dirs.append(os.path.dirname(os.path.abspath(mod.__file__)) + os.sep)
    return tuple(dirs)


def is_framework_own(f) -> bool:
    code = getattr(inspect.unwrap(getattr(f, "__func__", f)), "__code__", None)
    path = os.path.abspath(code.co_filename) if code is not None else ""
    return path.startswith(_framework_dirs())


# thread id -> how many default runs are on in it (0 while gradviz traces a user's
# get_concrete_function: that trace keeps the user's gradients)
_ACTIVE: dict[int, int] = {}
_OPEN = [0]  # windows open in any thread: the patches stay while > 0
_TWINS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Function -> its twin
_IS_TWIN: weakref.WeakSet = weakref.WeakSet()
_SCANNED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # ConcreteFunction -> kept
_KEPT: list[str] = []  # overrides found since the last take_kept()


def _on() -> bool:
    return bool(_ACTIVE) and _ACTIVE.get(get_ident(), 0) > 0


# thread id -> names of the user's custom gradients that ran while custom_gradients_seen is open
_SEEN: dict[int, list] = {}


def _seen() -> list | None:
    return _SEEN.get(get_ident()) if _SEEN else None


def take_kept() -> list[str]:
    """The overrides gradviz could not remove that default runs met since the last call."""
    found = list(dict.fromkeys(_KEPT))
    _KEPT.clear()
    return found


def kept_message(names: list[str]) -> str:
    return (
        f"{OVERRIDE_KEPT} for the default mode: {', '.join(names)} still ran its custom "
        "gradient (in a graph TensorFlow had already traced: a ConcreteFunction from "
        "get_concrete_function, a loaded SavedModel, or a gradient_override_map)"
    )


def _twin(fn):
    """The function a default run calls in place of the tf.function `fn`; None where TensorFlow
    cannot clone it (then its Python function runs eagerly, as tf.config.run_functions_eagerly
    would run it)."""
    try:
        return _TWINS[fn]
    except KeyError:
        pass
    try:
        twin = fn._clone(python_function=None)
    except Exception:  # noqa: BLE001 - another TensorFlow's Function: run it eagerly instead
        twin = None
    if twin is not None:
        _IS_TWIN.add(twin)
    _TWINS[fn] = twin
    return twin


@contextlib.contextmanager
def _paused():
    me = get_ident()
    depth = _ACTIVE.pop(me, 0)
    try:
        yield
    finally:
        if depth:
            _ACTIVE[me] = depth


def _patches():
    eager, graph = _cg._eager_mode_decorator, _cg._graph_mode_decorator
    call, concrete = _poly.Function.__call__, _poly.Function.get_concrete_function
    call_flat = _concrete.ConcreteFunction._call_flat

    def as_default(original):
        def decorator(f, args, kwargs):
            own = is_framework_own(f)
            seen = _seen()
            if seen is not None and not own:
                seen.append(getattr(f, "__qualname__", str(f)))
            if not _on() or own:
                return original(f, args, kwargs)
            return f(*args, **kwargs)[0]

        return decorator

    def twin_call(self, *args, **kwargs):
        if _on() and self not in _IS_TWIN:
            twin = _twin(self)
            if twin is None:
                return self.python_function(*args, **kwargs)
            return twin(*args, **kwargs)
        return call(self, *args, **kwargs)

    def user_concrete(self, *args, **kwargs):
        # what user code gets and may keep is a trace with its own gradients; when called in
        # a default run the scan below reports them, rather than a plain trace leaking into
        # later custom runs
        if _on() and self not in _IS_TWIN:
            with _paused():
                return concrete(self, *args, **kwargs)
        return concrete(self, *args, **kwargs)

    def scanned_call_flat(self, *args, **kwargs):
        seen = _seen()
        if (_on() or seen is not None) and _context.executing_eagerly():
            try:
                kept = _SCANNED.get(self)
                if kept is None:
                    kept = _SCANNED[self] = overrides_in(self, is_framework_own)
            except TypeError:  # not weakly referenceable: read it each time
                kept = overrides_in(self, is_framework_own)
            (_KEPT if _on() else seen).extend(kept)
        return call_flat(self, *args, **kwargs)

    put = (
        (_cg, "_eager_mode_decorator", as_default(eager)),
        (_cg, "_graph_mode_decorator", as_default(graph)),
        (_poly.Function, "__call__", twin_call),
        (_poly.Function, "get_concrete_function", user_concrete),
        (_concrete.ConcreteFunction, "_call_flat", scanned_call_flat),
    )
    old = (
        (_cg, "_eager_mode_decorator", eager),
        (_cg, "_graph_mode_decorator", graph),
        (_poly.Function, "__call__", call),
        (_poly.Function, "get_concrete_function", concrete),
        (_concrete.ConcreteFunction, "_call_flat", call_flat),
    )
    return put, old


_PATCHES: list = []  # (put, old), made once: the patches only read _ACTIVE


@contextlib.contextmanager
def custom_gradients_as_default():
    """Within, in this thread: every user or third-party custom_gradient function
    differentiates its forward with TensorFlow's autodiff, tf.functions run as their twins;
    restored on exit."""
    me = get_ident()
    with _patched():
        _ACTIVE[me] = _ACTIVE.get(me, 0) + 1
        try:
            yield
        finally:
            depth = _ACTIVE.pop(me, 1) - 1
            if depth > 0:
                _ACTIVE[me] = depth


@contextlib.contextmanager
def custom_gradients_seen():
    """Within, in this thread: the names of the user's (and third-party) custom gradients that
    ran, into the list yielded: a custom_gradient function called (or traced), or one in a
    traced graph called eagerly. The op's own gradient computation is otherwise untouched (the
    patches run the originals while no default run is on)."""
    me = get_ident()
    found: list = []
    with _patched():
        outer = _SEEN.get(me)
        _SEEN[me] = found
        try:
            yield found
        finally:
            if outer is None:
                _SEEN.pop(me, None)
            else:
                _SEEN[me] = outer
                outer.extend(found)


@contextlib.contextmanager
def _patched():
    """The patches in place while any window is open (in any thread)."""
    if _OPEN[0] == 0:
        if not _PATCHES:
            _PATCHES.extend(_patches())
        for owner, attr, value in _PATCHES[0]:
            setattr(owner, attr, value)
    _OPEN[0] += 1
    try:
        yield
    finally:
        _OPEN[0] -= 1
        if _OPEN[0] == 0:
            for owner, attr, value in _PATCHES[1]:
                setattr(owner, attr, value)
