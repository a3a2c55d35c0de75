"""JAX's custom rules: which objects are `jax.custom_vjp` / `jax.custom_jvp` functions (and
equinox's `filter_custom_vjp`, a jax.custom_vjp inside a wrapper), their primal, their
non-differentiable arguments, and the default mode's removal of every rule (with the check that
none was left in the traced graph). Worker-only; equinox only where a file imported it."""

from __future__ import annotations

import contextlib
import inspect
import sys

import jax

from gradviz.backends.introspect import OverrideKept, where_of
from gradviz.model import OVERRIDE_KEPT

_RULE_TYPES = {jax.custom_vjp: "custom_vjp", jax.custom_jvp: "custom_jvp"}
_RULE_PRIMITIVES = ("custom_vjp_call", "custom_jvp_call", "custom_lin")


def _eqx_vjp():
    """equinox.filter_custom_vjp where equinox is imported, else None."""
    return getattr(sys.modules.get("equinox"), "filter_custom_vjp", None)


def is_filter_vjp(obj) -> bool:
    cls = _eqx_vjp()
    return cls is not None and isinstance(obj, cls)


def rule_kind(obj) -> str | None:
    """'custom_vjp' / 'custom_jvp' for such a function (its rule defined), else None."""
    for cls, kind in _RULE_TYPES.items():
        if isinstance(obj, cls):
            return kind
    return "custom_vjp" if is_filter_vjp(obj) else None


def has_rule(obj) -> bool:
    """defvjp / defjvp was called: a custom_vjp without one raises at its first call (a
    filter_custom_vjp makes its jax.custom_vjp once def_fwd and def_bwd were both called)."""
    if is_filter_vjp(obj):
        return getattr(obj, "fn_wrapped", None) is not None
    if isinstance(obj, jax.custom_vjp):
        return getattr(obj, "fwd", None) is not None and getattr(obj, "bwd", None) is not None
    return getattr(obj, "jvp", None) is not None


def is_jax_own(obj) -> bool:
    """A rule of JAX's or of a JAX library's own (jax.nn.relu is a custom_jvp): not a user's op
    unless the file names it with gradviz.op()(...)."""
    root = (getattr(primal(obj), "__module__", "") or "").split(".")[0]
    return root in ("jax", "jaxlib")


def primal(obj):
    """The function the rule is attached to (`fun`; a filter_custom_vjp's `fn`): what the
    default mode differentiates."""
    if is_filter_vjp(obj):
        return obj.fn
    return getattr(obj, "fun", obj)


def signature_params(obj) -> list[inspect.Parameter]:
    return list(inspect.signature(primal(obj)).parameters.values())


def nondiff_names(obj) -> tuple[str, ...]:
    """The argument names at the rule's nondiff_argnums: constants, never inputs."""
    params = signature_params(obj)
    return tuple(
        params[i].name for i in (getattr(obj, "nondiff_argnums", ()) or ()) if i < len(params)
    )


def check_nondiff(obj, where: str, plans) -> None:
    """A nondiff_argnums argument needs a constant: consts= or a signature default. One given
    as an input (inputs=) would be a traced array, which JAX refuses there."""
    given = {p.name: p for p in plans}
    defaults = {p.name for p in signature_params(obj) if p.default is not p.empty}
    for name in nondiff_names(obj):
        p = given.get(name)
        if p is not None and p.kind == "tensor":
            raise ValueError(
                f"{where}: argument {name!r} is in nondiff_argnums, so JAX takes it as a constant, "
                f"not an array it differentiates: give its value with consts={{{name!r}: ...}} "
                "in @gradviz.op rather than inputs="
            )
        if p is None and name not in defaults:
            raise ValueError(
                f"{where}: argument {name!r} is in nondiff_argnums (a constant) and has no "
                f"default: give its value with consts={{{name!r}: ...}} in @gradviz.op "
                "(or gradviz.op(consts=...)(fn) for an imported function)"
            )


def check_filter_args(obj, where: str, plans) -> None:
    """equinox differentiates a filter_custom_vjp in its first argument only and raises on a
    tangent of any other array: a float input there would fail in custom mode, never a gradient."""
    if not is_filter_vjp(obj):
        return
    tensors = [p for p in plans if p.kind == "tensor"]
    for p in tensors[1:]:
        if p.values is not None and p.values.dtype.kind == "f":
            raise ValueError(
                f"{where}: argument {p.name!r} of an equinox.filter_custom_vjp comes after its "
                f"first (vjp_arg), which is all equinox differentiates (it raises on a tangent "
                f"of any other array): give {p.name!r} in consts= (or as an int / bool input), "
                "or pack the arrays to differentiate into the first argument"
            )


def rule_where(obj, fallback: str) -> str:
    """Where the user's rule is: the bwd of a custom_vjp, the jvp of a custom_jvp."""
    fn = getattr(obj, "bwd", None) or getattr(obj, "jvp", None) or getattr(obj, "fn_bwd", None)
    return where_of(fn, fallback) if fn is not None else fallback


def _primal_call(self, *args, **kwargs):
    return self.fun(*args, **kwargs)


def _filter_primal_call(self, *args, **kwargs):
    # the user's fn itself: equinox's partition and its nondifferentiable() on the later
    # arguments are the wrapper's, not the primal's
    return self.fn(*args, **kwargs)


@contextlib.contextmanager
def rules_as_default():
    """Every custom_vjp / custom_jvp (and filter_custom_vjp) called as its primal (no rule is
    traced), with jit off so that no trace made with a rule earlier (a jitted library function)
    is reused."""
    calls = dict.fromkeys(_RULE_TYPES, _primal_call)
    eqx_vjp = _eqx_vjp()
    if eqx_vjp is not None:
        calls[eqx_vjp] = _filter_primal_call
    saved = {cls: cls.__dict__["__call__"] for cls in calls}
    for cls, call in calls.items():
        cls.__call__ = call
    try:
        with jax.disable_jit():
            yield
    finally:
        for cls, call in saved.items():
            cls.__call__ = call


def kept_rules(closed) -> list[str]:
    """The names of the custom rules still in a traced jaxpr (its sub-jaxprs included)."""
    found: list[str] = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name in _RULE_PRIMITIVES:
                found.append(str(eqn.params.get("name", eqn.primitive.name)))
            for v in eqn.params.values():
                for sub in v if isinstance(v, (tuple, list)) else (v,):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        walk(inner)

    walk(closed.jaxpr)
    return found


def raise_if_kept(closed) -> None:
    kept = kept_rules(closed)
    if kept:
        raise OverrideKept(
            f"{OVERRIDE_KEPT}: the custom rule of {', '.join(sorted(set(kept)))} stayed in the "
            "default mode's traced graph (gradviz calls every custom_vjp / custom_jvp (and "
            "equinox filter_custom_vjp) as its "
            "primal there, with jit off; a rule reached another way, such as a jaxpr made "
            "ahead, is not removed), so JAX's own derivative is not known"
        )
