"""Which torch objects of a user's file are ops: Functions with their own backward, Modules
constructible without arguments, torch.library custom ops with a registered autograd formula,
each read from the object itself. Worker-only."""

from __future__ import annotations

import inspect

import torch

from gradviz.api import marked
from gradviz.backends.introspect import no_arg_constructible
from gradviz.backends.torch_overrides import is_override, own_attrs


def op_kind(obj, own: bool, named: bool, qualname: str) -> tuple[str | None, str]:
    """(kind, "") for an op ("function", "module", "custom_op"), else (None, why it is skipped,
    "" when that goes unsaid)."""
    body = custom_op_body(obj)
    if body is not None:  # the op object is torch's; its body tells whose op it is
        return ("custom_op", "") if not body.__module__.startswith("torch.") else (None, "")
    if not isinstance(obj, type):
        return None, (_NOT_AN_OP if _marked_function(obj, own, named) else "")
    if _is_function(obj):
        # an imported Function with its own backward is an op (torch's own are not)
        return ("function", "") if own or named or is_override(obj) else (None, "")
    if not issubclass(obj, torch.nn.Module):
        return None, ""
    if not own and not named:
        if obj.__module__.split(".")[0] == "torch":
            return None, ""
        return None, (
            f"an imported nn.Module; write gradviz.op()({qualname}) at module level to run it"
        )
    if not no_arg_constructible(obj):
        return None, (
            "its constructor needs arguments; give them defaults or subclass it "
            "with an __init__ that passes them"
        )
    return "module", ""


def _is_function(obj) -> bool:
    return (
        isinstance(obj, type)
        and issubclass(obj, torch.autograd.Function)
        and obj is not torch.autograd.Function
        and "backward" in own_attrs(obj)
    )


_NOT_AN_OP = (
    "marked with gradviz.op, but a plain function is not an op (gradviz runs torch "
    "Functions, Modules and torch.library custom ops); call it from a Module's "
    "forward to check its gradient there"
)


def _marked_function(obj, own: bool, named: bool) -> bool:
    """A plain function the file marked with gradviz.op: it was left out in silence. In a file
    that imports TensorFlow too, the TF worker says so (a tf.function may be its op)."""
    return (
        inspect.isfunction(obj)
        and not _imports_tensorflow(obj.__globals__)
        and marked(obj, own, named)
    )


def _imports_tensorflow(namespace: dict) -> bool:
    return any(
        inspect.ismodule(v) and v.__name__.split(".")[0] in ("tensorflow", "keras", "tf_keras")
        for v in namespace.values()
    )


def custom_op_body(obj):
    """The Python function of a `torch.library.custom_op` with a registered autograd formula
    (`register_autograd`), or None. Its body is what the framework's autograd differentiates in
    the default mode; calling the op itself runs the registered backward."""
    try:
        from torch._library.custom_ops import CustomOpDef
    except ImportError:  # a torch without torch.library.custom_op
        return None
    if not isinstance(obj, CustomOpDef) or getattr(obj, "_backward_fn", None) is None:
        return None
    body = getattr(obj, "_init_fn", None)
    return body if callable(body) else None
