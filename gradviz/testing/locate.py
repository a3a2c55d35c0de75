"""Where gradviz finds an op the caller holds as an object: its file, its name there, and the
framework it belongs to, read without importing any framework (the caller already has).

A test passes the op itself (`check(RoundSTE)`); gradviz runs it in a worker, which imports the
op's file as `gradviz run` would and finds the op there by that name. An op made inside a
function (a class defined in the test body) has no file to be found in: that is said plainly.
"""

from __future__ import annotations

import inspect
import os
import sys

from gradviz.errors import GradvizError
from gradviz.vocab import framework_of_import


class OpNotFound(GradvizError, LookupError):
    """The object cannot be found by gradviz in a file (no file, not at module level)."""


def framework_of(op) -> str | None:
    """ "torch" or "tf" from the classes the op is made of (a Function or Module subclass, a
    Keras Layer, TensorFlow's custom_gradient wrapper); None for a plain function."""
    classes = op.__mro__ if isinstance(op, type) else type(op).__mro__
    for cls in classes:
        root = (getattr(cls, "__module__", "") or "").split(".")[0]
        if framework_of_import(root) is not None:
            return framework_of_import(root)
    return None


def locate(op) -> tuple[str, str]:
    """(absolute path of the op's file, the name the op is bound to at its module level)."""
    qualname = getattr(op, "__qualname__", None) or getattr(op, "__name__", None)
    if not isinstance(qualname, str):
        raise OpNotFound(
            f"gradviz.testing takes the op itself (a Function, Module, Layer or "
            f"custom_gradient function), not {type(op).__name__} {op!r}"
        )
    if "<locals>" in qualname:
        raise OpNotFound(
            f"{qualname} is defined inside a function: gradviz runs an op in a worker "
            "process, which imports the op's file and finds the op at its module "
            "level; move it to module level (of the test file, or of a module of ops)"
        )
    module = sys.modules.get(getattr(op, "__module__", "") or "")
    path = getattr(module, "__file__", None) if module is not None else None
    if not path:
        try:
            path = inspect.getsourcefile(inspect.unwrap(op))
        except TypeError:
            path = None
    if not path or not os.path.exists(path):
        raise OpNotFound(
            f"{qualname} has no source file gradviz can import (defined in "
            f"{getattr(op, '__module__', '?')}); define it in a .py file"
        )
    return os.path.abspath(path), _bound_name(op, module, qualname)


def _bound_name(op, module, qualname: str) -> str:
    """The module-level name of `op`: its own name when that is bound to it, else any other
    name bound to it there (an alias), else its own name (the worker says what it found)."""
    own = qualname.rsplit(".", 1)[-1]
    names = vars(module) if module is not None else {}
    if names.get(own) is op:
        return own
    return next((n for n, v in names.items() if v is op and not n.startswith("__")), own)
