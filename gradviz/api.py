"""The `@gradviz.op` metadata decorator used inside user op modules (no framework import)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from gradviz.verdict import NAMES

META_ATTR = "__gradviz_op__"
REGISTRY_ATTR = "__gradviz_registered__"


# The verdict names (DESIGN.md "Verdicts"): gradviz.verdict imports nothing beyond the
# standard library, so importing gradviz still loads no numpy
VERDICT_NAMES = NAMES


def op(
    name: str | None = None,
    *,
    inputs: dict[str, Any] | None = None,
    consts: dict[str, Any] | None = None,
    reference: Callable | None = None,
    expect: str | tuple[str, ...] | None = None,
):
    """Attach gradviz metadata to an op (Function, custom_gradient function, Module or Layer).

    name      pairs the torch and tf versions of one op (default: the Python name)
    inputs    per argument: a shape tuple of ints, or explicit values (anything numpy.asarray takes)
    consts    non-tensor arguments, passed as they are
    reference a forward with the framework's default autodiff semantics, used for the `default` mode
    expect    the verdict the op is meant to get when it is not a plain match, e.g. "surrogate"
              (a straight-through estimator) or "differs" (a gradient reversal on purpose), or a
              tuple of them: the pytest plugin and gradviz.testing pass the op when its worst
              verdict is one of these (api.expected)
    """
    caller = sys._getframe(1)
    where = f"{caller.f_code.co_filename}:{caller.f_lineno}"  # errors about the metadata point here
    if name is not None and not isinstance(name, str):
        if callable(name) and not (inputs or consts or reference or expect):
            # `@gradviz.op` without parentheses: returning `mark` here replaced the user's op
            # with gradviz's inner function and it silently vanished from the file's ops
            return _marker(None, None, None, None, where, depth=2)(name)
        raise TypeError(
            f"gradviz.op(name=...) takes a str, not {type(name).__name__}: write "
            "@gradviz.op(name='...') or @gradviz.op()"
        )
    for key, value in (("inputs", inputs), ("consts", consts)):
        if value is not None and not isinstance(value, Mapping):
            raise TypeError(
                f"gradviz.op({key}=...) takes a dict of argument name to value, not "
                f"{type(value).__name__}"
            )
    if reference is not None and not callable(reference):
        raise TypeError(
            f"gradviz.op(reference=...) takes a function, not {type(reference).__name__}"
        )
    return _marker(name, inputs, consts, reference, where, depth=1, expect=expected(expect))


def expected(expect) -> tuple[str, ...]:
    """expect= as a tuple of verdict names; a name that is no verdict is a TypeError at the
    decorator (a misspelt "surrogat" must not leave the op failing for no visible reason)."""
    if expect is None:
        return ()
    names = (expect,) if isinstance(expect, str) else tuple(expect)
    wrong = [n for n in names if n not in VERDICT_NAMES]
    if wrong or not names:
        raise TypeError(
            f"gradviz.op(expect=...) takes a verdict name or a tuple of them "
            f"({', '.join(VERDICT_NAMES)}), not {expect!r}"
        )
    return names


def _marker(name, inputs, consts, reference, where: str, depth: int, expect=()):
    meta = {
        "name": name,
        "inputs": dict(inputs or {}),
        "consts": dict(consts or {}),
        "reference": reference,
        "where": where,
        "expect": expect,
    }

    def mark(obj):
        caller = sys._getframe(depth).f_globals
        if getattr(obj, "__module__", None) != caller.get("__name__"):
            # an imported class or function: registered in the file that names it, never
            # modified (it belongs to a library, and other files may use it differently)
            caller.setdefault(REGISTRY_ATTR, []).append((obj, meta))
            return obj
        try:
            setattr(obj, META_ATTR, meta)
        except (AttributeError, TypeError):
            # tf.custom_gradient returns a decorator object that may refuse attributes: wrap its dict
            obj.__dict__[META_ATTR] = meta
        return obj

    return mark


def registered(module) -> list:
    """(object, metadata) for each imported op the module named with gradviz.op(...)(obj)."""
    return list(vars(module).get(REGISTRY_ATTR, ()))


def marked(obj, own: bool, named: bool) -> bool:
    """Whether the file marked `obj` with gradviz.op: named with gradviz.op(...)(obj), or its own
    object carrying the decorator's metadata (adapters use it to say why a marked object is no op)."""
    return named or (own and getattr(obj, META_ATTR, None) is not None)


def meta_of(obj, module=None) -> dict:
    """The metadata given by @gradviz.op (or by gradviz.op(...)(obj) in `module` for an
    imported obj), or an empty default. Class metadata is not inherited."""
    for other, meta in registered(module) if module is not None else ():
        if other is obj:
            return meta
    meta = None
    if isinstance(obj, type):
        meta = obj.__dict__.get(META_ATTR)
    else:
        meta = getattr(obj, META_ATTR, None)
    return meta or {"name": None, "inputs": {}, "consts": {}, "reference": None, "expect": ()}
