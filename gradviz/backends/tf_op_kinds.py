"""Which TensorFlow objects of a user's file are ops: custom_gradient functions (and a
tf.function around one) and Keras Layers, Keras 3's or Keras 2's, each read from the object
itself. Worker-only."""

from __future__ import annotations

import inspect
import sys

from gradviz.api import marked
from gradviz.backends.introspect import no_arg_constructible
from gradviz.backends.tf_overrides import is_framework_own


def keras_of(cls):
    """The keras package a Layer class comes from (`keras` for Keras 3, `tf_keras` for Keras 2),
    or None for a class that is not a Layer. Read from the class, never from tf.keras, which
    TF_USE_LEGACY_KERAS=1 switches (possibly after this worker imported TensorFlow)."""
    for klass in getattr(cls, "__mro__", ()):
        root = klass.__module__.split(".")[0]
        if klass.__name__ == "Layer" and root in ("keras", "tf_keras"):
            return sys.modules.get(root)
    return None


def _classify(obj, own: bool, named: bool, qualname: str) -> tuple[str | None, str]:
    fn = _user_function(obj)
    if fn is not None:
        # an imported custom_gradient function is an op; TensorFlow's own are not
        if own or named or not is_framework_own(fn):
            return "custom_gradient", ""
        return None, ""
    if _marked_function(obj, own, named):
        return None, _NOT_AN_OP
    if not isinstance(obj, type) or keras_of(obj) is None:
        return None, ""
    if not own and not named:
        if obj.__module__.split(".")[0] in ("keras", "tf_keras", "tensorflow"):
            return None, ""
        return None, (
            f"an imported Keras Layer; write gradviz.op()({qualname}) at module level to run it"
        )
    if not no_arg_constructible(obj):
        return None, (
            "its constructor needs arguments; give them defaults or subclass it with "
            "an __init__ that passes them"
        )
    return "layer", ""


_NOT_AN_OP = (
    "marked with gradviz.op, but a plain function or tf.function without a "
    "@tf.custom_gradient under it is not an op (gradviz runs custom_gradient "
    "functions, Keras Layers, torch Functions and Modules); call it from a Layer's "
    "call() to check its gradient there"
)


def _marked_function(obj, own: bool, named: bool) -> bool:
    """A function the file marked with gradviz.op that is no op: it was left out in silence
    (a tf.function(jit_compile=True) around a call of a custom_gradient, a straight-through
    x + tf.stop_gradient(...)). Classes are left to each framework: a torch Function of a file
    that uses both frameworks is not the tf worker's to judge."""
    if isinstance(obj, type) or not (inspect.isfunction(obj) or hasattr(obj, "python_function")):
        return False
    return marked(obj, own, named)


def _is_custom_gradient(obj) -> bool:
    deco = getattr(obj, "_tf_decorator", None)
    return getattr(deco, "decorator_name", None) == "custom_gradient"


def _user_function(obj):
    """The user's Python function under @tf.custom_gradient, also where a @tf.function wraps
    that (a common way to write one; calling the tf.function runs it, and in the default mode
    its twin without the override: tf_overrides); None for anything else."""
    inner = obj if _is_custom_gradient(obj) else getattr(obj, "python_function", None)
    if inner is None or not _is_custom_gradient(inner):
        return None
    return inner.__wrapped__
