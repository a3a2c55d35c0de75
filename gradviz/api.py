"""The `@gradviz.op` metadata decorator used inside user op modules (no framework import)."""
from __future__ import annotations

from typing import Any, Callable

META_ATTR = "__gradviz_op__"


def op(name: str | None = None, *, inputs: dict[str, Any] | None = None,
       consts: dict[str, Any] | None = None, reference: Callable | None = None):
    """Attach gradviz metadata to an op (Function, custom_gradient function, Module or Layer).

    name      pairs the torch and tf versions of one op (default: the Python name)
    inputs    per argument: a shape tuple of ints, or explicit values (anything numpy.asarray takes)
    consts    non-tensor arguments, passed as they are
    reference a forward with the framework's default autodiff semantics, used for the `default` mode
    """
    meta = {"name": name, "inputs": dict(inputs or {}), "consts": dict(consts or {}),
            "reference": reference}

    def mark(obj):
        try:
            setattr(obj, META_ATTR, meta)
        except (AttributeError, TypeError):
            # tf.custom_gradient returns a decorator object that may refuse attributes: wrap its dict
            obj.__dict__[META_ATTR] = meta
        return obj

    return mark


def meta_of(obj) -> dict:
    """The metadata given by @gradviz.op, or an empty default. Class metadata is not inherited."""
    meta = None
    if isinstance(obj, type):
        meta = obj.__dict__.get(META_ATTR)
    else:
        meta = getattr(obj, META_ATTR, None)
    return meta or {"name": None, "inputs": {}, "consts": {}, "reference": None}
