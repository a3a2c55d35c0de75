"""flax.nnx, flax.linen and equinox Modules as ops: which classes are Modules, how one is built
and called with given parameters, its trainable parameters named by attribute path
(`lin.kernel`, `Dense_0.bias`) and its other state kept as built. Worker-only; flax and equinox
are imported only when a file has imported them."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

from gradviz.backends.graphs import differentiable

_KINDS = (
    ("flax.nnx", "Module", "flax.nnx.Module"),
    ("flax.linen", "Module", "flax.linen.Module"),
    ("equinox", "Module", "equinox.Module"),
)
_LIBRARIES = ("flax", "equinox", "jax", "optax")
_INIT_SEED = 0


def module_kind(obj) -> str | None:
    """'flax.nnx.Module' / 'flax.linen.Module' / 'equinox.Module' for a subclass, else None."""
    if not isinstance(obj, type):
        return None
    for package, name, label in _KINDS:
        base = getattr(sys.modules.get(package), name, None)
        if base is not None and issubclass(obj, base) and obj is not base:
            return label
    return None


def is_library_class(obj) -> bool:
    return obj.__module__.split(".")[0] in _LIBRARIES


def call_params(cls) -> list[inspect.Parameter]:
    """The arguments of the Module's __call__, without self."""
    return list(inspect.signature(cls.__call__).parameters.values())[1:]


@dataclass
class Made:
    """A built Module: call(params, *args, **kwargs), its trainable parameters and its other
    state by name, and bound(params), the Module object holding given parameters (reference=)."""

    call: Callable
    params: dict
    frozen: dict
    bound: Callable


def _key_name(key) -> str:
    for attr in ("key", "name", "idx"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(key)


def _named(tree, is_param=lambda x: True):
    """({name: leaf} of the array leaves is_param accepts, the flat leaves, the treedef)."""
    flat, treedef = jax.tree_util.tree_flatten_with_path(tree)
    named, index = {}, {}
    for i, (path, leaf) in enumerate(flat):
        keys = [_key_name(k) for k in path]
        if len(keys) > 1 and keys[-1] == "value":  # an nnx Variable's array
            keys = keys[:-1]
        if isinstance(leaf, jax.Array) and is_param(leaf):
            name = ".".join(keys)
            named[name], index[name] = leaf, i
    return named, [leaf for _, leaf in flat], treedef, index


def _cast(named: dict, dtype) -> dict:
    return {
        n: v.astype(dtype) if jnp.issubdtype(v.dtype, jnp.floating) else v for n, v in named.items()
    }


def _rebuilder(leaves, treedef, index):
    def rebuild(params: dict):
        new = list(leaves)
        for name, value in params.items():
            new[index[name]] = value
        return jax.tree_util.tree_unflatten(treedef, new)

    return rebuild


def build(cls, plans, dtype) -> Made:
    kind = module_kind(cls)
    if kind == "flax.nnx.Module":
        return _nnx(cls(), dtype)
    if kind == "flax.linen.Module":
        return _linen(cls(), plans, dtype)
    return _equinox(cls(), dtype)


def _nnx(module, dtype) -> Made:
    from flax import nnx

    graphdef, state, rest = nnx.split(module, nnx.Param, ...)
    params, leaves, treedef, index = _named(state)
    frozen, _, _, _ = _named(rest)
    rebuild = _rebuilder(leaves, treedef, index)

    def bound(p):
        return nnx.merge(graphdef, rebuild(p), rest)

    def call(p, *args, **kwargs):
        return bound(p)(*args, **kwargs)

    return Made(call, _cast(params, dtype), frozen, bound)


def _linen(module, plans, dtype) -> Made:
    """A linen Module's parameters come from init on inputs of the run's shape, as a Keras
    Layer's come from its first call."""
    args = [
        jnp.asarray(p.values, dtype=dtype) if differentiable(p.values) else jnp.asarray(p.values)
        for p in plans
        if p.kind == "tensor"
    ]
    kwargs = {p.name: p.const for p in plans if p.kind == "const"}
    variables = module.init(jax.random.PRNGKey(_INIT_SEED), *args, **kwargs)
    rest = {k: v for k, v in variables.items() if k != "params"}
    params, leaves, treedef, index = _named(variables.get("params", {}))
    frozen = {f"{k}.{n}": v for k, tree in rest.items() for n, v in _named(tree)[0].items()}
    rebuild = _rebuilder(leaves, treedef, index)

    def bound(p):
        return module.bind({"params": rebuild(p), **rest})

    def call(p, *args, **kwargs):
        return module.apply({"params": rebuild(p), **rest}, *args, **kwargs)

    return Made(call, _cast(params, dtype), frozen, bound)


def _equinox(module, dtype) -> Made:
    import equinox as eqx

    params, leaves, treedef, index = _named(module, eqx.is_inexact_array)
    rebuild = _rebuilder(leaves, treedef, index)

    def call(p, *args, **kwargs):
        return rebuild(p)(*args, **kwargs)

    return Made(call, _cast(params, dtype), {}, rebuild)
