"""Removing custom gradients for the `default` mode, wherever they live (TensorFlow). Worker-only.

DESIGN.md: `default` is TensorFlow's own autodiff of the same forward, whether the
`@tf.custom_gradient` function is the op itself, nested inside a Layer's `call` (decorated anew
on every call), or defined in another module the op calls. Every such function, however it is
referred to, runs through `tensorflow.python.ops.custom_gradient`'s eager and graph decorators at
call time; for the length of one default run those two run the undecorated forward `f(x)[0]`
instead, then they are restored. Custom gradients inside TensorFlow and Keras themselves are
part of the framework's autodiff and stay.
"""
from __future__ import annotations

import contextlib
import inspect
import os
import sys

import tensorflow as tf
from tensorflow.python.ops import custom_gradient as _cg

_FRAMEWORK_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                        for m in (tf, _cg) if getattr(m, "__file__", None))


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


@contextlib.contextmanager
def custom_gradients_as_default():
    """Within: every user or third-party custom_gradient function differentiates its forward
    with TensorFlow's autodiff; restored on exit."""
    eager, graph = _cg._eager_mode_decorator, _cg._graph_mode_decorator

    def as_default(original):
        def decorator(f, args, kwargs):
            if is_framework_own(f):
                return original(f, args, kwargs)
            return f(*args, **kwargs)[0]
        return decorator

    _cg._eager_mode_decorator, _cg._graph_mode_decorator = as_default(eager), as_default(graph)
    try:
        yield
    finally:
        _cg._eager_mode_decorator, _cg._graph_mode_decorator = eager, graph
