"""JAX: find custom_vjp / custom_jvp functions (and the flax / equinox Modules that use them),
build them per mode, differentiate with jax.vjp. Worker-only.

custom: jax.vjp through the op as written (its rule); default: jax.vjp of the primal with every
rule removed (jax_rules.rules_as_default); numeric: numeric_eval through NumericKit in float64
(jax_enable_x64 on there: x64_for).
An intermediate's gradient is read through a zero "tap" added to it (d loss / d tap), so the
recorded tensors need no framework hook."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import random

import jax
import jax.numpy as jnp
import numpy as np

from gradviz.backends import jax_devices, jax_modules
from gradviz.backends.adapter import AdapterBase, BuiltBase
from gradviz.backends.graphs import differentiable, leaf_array
from gradviz.backends.introspect import OpOutputError, defined_at, no_arg_constructible
from gradviz.backends.jax_numeric_kit import F, NumericKit, is_array
from gradviz.backends.jax_rules import (
    check_filter_args,
    check_nondiff,
    has_rule,
    is_filter_vjp,
    is_jax_own,
    nondiff_names,
    primal,
    raise_if_kept,
    rule_kind,
    rules_as_default,
    signature_params,
)
from gradviz.backends.upstream_probe import probe_skipped_reason
from gradviz.model import FROZEN

_DTYPES = {"float32": jnp.float32, "float64": jnp.float64}
_FROZEN = (
    f"{FROZEN} (state that is not a trainable parameter): kept at the value the module "
    "built, not seeded, not perturbed by the numeric reference"
)
_NO_RULE = (
    "a {kind} without its rule ({what} was never called), so it has no custom gradient to check"
)


class Built(BuiltBase):
    """One op ready to call in one mode. A function is called as it is; a Module as
    call(params, *args), its trainable parameters by attribute path (jax_modules), so a
    differentiation can hand it traced values (`live`)."""

    is_tensor = staticmethod(is_array)

    def __init__(self, call, params=None, frozen=None, patch=None):
        super().__init__(call, dict(params or {}), patch, frozen=dict(frozen or {}))
        self.takes_params = params is not None
        self.check_overrides = patch is rules_as_default
        self.live = None  # {name: array} during a differentiation
        self._attr: dict = {}  # shown name -> the module's own (avoid_names)

    def avoid_names(self, owns) -> dict:
        renamed = super().avoid_names(owns)
        self._attr.update(renamed)
        return renamed

    def call_op(self, args, kwargs):
        with self._patch():
            if self.takes_params:
                params = self.live if self.live is not None else self._params
                out = self._call(
                    {self._attr.get(n, n): v for n, v in params.items()}, *args, **kwargs
                )
            else:
                out = self._call(*args, **kwargs)
        leaves = [x for x in jax.tree_util.tree_leaves(out) if is_array(x)]
        if not leaves:
            raise OpOutputError(
                f"the op returned {type(out).__name__}, not a JAX array (or a pytree of them)"
            )
        return leaves

    def param_shape(self, name):
        return tuple(int(s) for s in self._params[name].shape)

    def get_param(self, name):
        return np.asarray(self._params[name], dtype=np.float64)

    def set_param(self, name, values):
        # the runner seeds outside build's x64 scope: without it a float64 parameter (the
        # numeric build's) was truncated to float32, and numeric ran at the rounded values
        dtype = self._params[name].dtype
        with x64_for(str(dtype)):
            self.put(name, jnp.asarray(np.asarray(values), dtype=dtype))

    def put(self, name, value):
        self._params[name] = value


class JaxAdapter(AdapterBase):
    name = "jax"
    F = F

    # Process-wide settings a file may change at import; each file keeps its own (user_state).
    def settings(self) -> tuple:
        return (bool(jax.config.jax_enable_x64),)

    def apply_settings(self, settings: tuple) -> None:
        jax.config.update("jax_enable_x64", settings[0])

    def seed_random(self, seed: int) -> None:
        """JAX has no global random state; Python's and numpy's are seeded alike for every
        mode, as the other frameworks' are."""
        random.seed(seed)
        np.random.seed(seed % (1 << 32))

    def version(self) -> str:
        return str(jax.__version__)

    devices = staticmethod(jax_devices.devices)
    resolve_device = staticmethod(jax_devices.resolve_device)

    # --- finding ops (the walk is AdapterBase.find_ops) --------------------------------------
    def classify(self, obj, own: bool, named: bool, qualname: str) -> tuple[str | None, str]:
        kind = rule_kind(obj)
        if kind is not None:
            if not own and not named and is_jax_own(obj):
                return None, ""  # jax.nn.relu imported into the file: JAX's, not the user's
            if not has_rule(obj):
                what = "defvjp" if kind == "custom_vjp" else "defjvp / defjvps"
                what = "def_fwd / def_bwd" if is_filter_vjp(obj) else what
                return None, _NO_RULE.format(kind=kind, what=what)
            return kind, ""
        module_kind = jax_modules.module_kind(obj)
        if module_kind is None:
            return None, ""
        if not own and not named:
            if jax_modules.is_library_class(obj):
                return None, ""
            return None, (
                f"an imported {module_kind}; write gradviz.op()({qualname}) at module "
                "level to run it"
            )
        if not no_arg_constructible(obj):
            return None, (
                "its constructor needs arguments; give them defaults or subclass it "
                "with an __init__ that passes them"
            )
        return "module", ""

    def find_ops(self, module, path: str):
        found, skipped = super().find_ops(module, path)
        # a filter_custom_vjp is an object of equinox's: where it is defined is its fn's
        return [
            (dataclasses.replace(info, defined_at=defined_at(primal(obj), module)), obj)
            if is_filter_vjp(obj)
            else (info, obj)
            for info, obj in found
        ], skipped

    def defining(self, obj, kind: str):
        return primal(obj) if kind in ("custom_vjp", "custom_jvp") else obj

    def forward_params(self, obj, info_or_kind) -> list[inspect.Parameter]:
        """The arguments fed as arrays: nondiff_argnums ones are constants (consts=)."""
        fixed = set(nondiff_names(obj)) if rule_kind(obj) else set()
        return [p for p in self.declared_params(obj, info_or_kind) if p.name not in fixed]

    def declared_params(self, obj, info_or_kind) -> list[inspect.Parameter]:
        if rule_kind(obj):
            return signature_params(obj)
        return jax_modules.call_params(obj)

    # --- modes ---------------------------------------------------------------------------------
    def build(self, obj, info, mode, dtype, device, module, meta, plans) -> Built:
        with x64_for(dtype):
            return self._build(obj, info, mode, dtype, device, meta, plans)

    def _build(self, obj, info, mode, dtype, device, meta, plans) -> Built:
        reference = meta.get("reference")
        if info.kind in ("custom_vjp", "custom_jvp"):
            check_nondiff(obj, info.where, plans)
            check_filter_args(obj, info.where, plans)
            if mode == "custom":
                return Built(obj)
            if reference is not None:
                return Built(reference)
            return Built(primal(obj), patch=rules_as_default)
        with jax.default_device(jax_devices.device_of(device)):
            made = jax_modules.build(obj, plans, _DTYPES[dtype])
        if mode == "custom":
            return Built(made.call, made.params, made.frozen)
        if reference is not None:
            return Built(
                lambda p, *a, **k: reference(made.bound(p), *a, **k), made.params, made.frozen
            )
        return Built(made.call, made.params, made.frozen, patch=rules_as_default)

    def differentiate(self, graph, built, dtype, device, probe=None) -> dict:
        jdtype = _DTYPES[dtype]
        fixed = [leaf.name for leaf in graph.leaves if not differentiable(leaf.values)]
        with jax.default_device(jax_devices.device_of(device)), x64_for(dtype):
            return self._differentiate(graph, built, jdtype, fixed, probe)

    def _differentiate(self, graph, built, jdtype, fixed, probe) -> dict:
        leaves = {
            leaf.name: jnp.asarray(leaf.values)
            if leaf.name in fixed
            else jnp.asarray(leaf.values, dtype=jdtype)
            for leaf in graph.leaves
        }
        xs = {n: t for n, t in leaves.items() if n not in fixed}
        params = dict(built.params())
        roles: dict[str, str] = {}

        def forward(xs, ps, taps):
            values: dict = {}
            outs: dict = {}

            def rec(name, t, role):
                roles[name] = role
                if name in taps:
                    t = t + taps[name]
                values[name] = t
                if role == "output" and name in taps:
                    outs[name] = t
                return t

            built.live = ps
            try:
                loss = graph.forward({**leaves, **xs}, built.call_op, rec, F)
            finally:
                built.live = None
            return (loss, outs), values

        # the recorded tensors' shapes first (a trace, no computing), for their taps
        shapes = jax.make_jaxpr(forward, return_shape=True)(xs, params, {})
        closed, (_, recorded) = shapes
        if built.check_overrides:
            raise_if_kept(closed)
        taps = {
            n: jnp.zeros(s.shape, s.dtype)
            for n, s in recorded.items()
            if jnp.issubdtype(s.dtype, jnp.inexact)
        }
        (loss, outs), pull, values = jax.vjp(forward, xs, params, taps, has_aux=True)
        zeros = {n: jnp.zeros_like(o) for n, o in outs.items()}
        gx, gp, gt = pull((jnp.ones_like(loss), zeros))
        probes, skipped = {}, ""
        if probe is not None and outs:
            try:
                ups = {
                    n: jnp.asarray(probe(n, tuple(o.shape)), dtype=o.dtype) for n, o in outs.items()
                }
                px, pp, _ = pull((jnp.zeros_like(loss), ups))
                probes = {**px, **pp}
            except Exception as exc:  # noqa: BLE001 - a rule that runs once: the probe alone goes
                probes, skipped = {}, probe_skipped_reason(exc)
        got: dict = {}
        grads = {**gx, **gp, **gt}
        targets = [(n, xs[n], "input" if _role(graph, n) == "input" else "param") for n in xs]
        targets += [(n, params[n], "param") for n in params]
        # in the order the graph recorded them (a pytree's dict comes back sorted by name)
        targets += [(n, values[n], roles[n]) for n in roles if n in taps]
        for name, value, role in targets:
            g = grads.get(name)
            got[name] = {
                "role": role,
                "value": _np(value),
                "grad": None if g is None else _np(g),
                "why": "",
                "inplace": False,
                "probe": _np(probes[name]) if name in probes else None,
                "grad_dtype": None,
            }
            if skipped and role in ("input", "param"):
                got[name]["probe_skipped"] = skipped
        for name in roles:  # integer outputs: their values, no gradient
            value = values[name]
            if name not in got:
                got[name] = {
                    "role": roles.get(name, "output"),
                    "value": _np(value),
                    "grad": None,
                    "why": "",
                }
        for name, v in built.frozen.items():
            got[name] = {
                "role": "param",
                "value": _np(v),
                "grad": None,
                "why": _FROZEN,
                "frozen": True,
            }
        for name in fixed:
            got[name] = {"role": "input", "value": _np(leaves[name]), "grad": None, "why": ""}
        return got

    def numeric_kit(self, device) -> NumericKit:
        return NumericKit(device)

    def evaluate(self, graph, built, leaves: dict, inject: dict, device) -> float:
        def rec(name, t, role):
            return t + jnp.asarray(inject[name], dtype=t.dtype) if name in inject else t

        with jax.default_device(jax_devices.device_of(device)), jax.enable_x64(True):
            arrays = {n: jnp.asarray(leaf_array(v)) for n, v in leaves.items()}
            return float(graph.forward(arrays, built.call_op, rec, F))


def _role(graph, name: str) -> str:
    return next(leaf.role for leaf in graph.leaves if leaf.name == name)


def _np(t) -> np.ndarray:
    return np.asarray(t)


def x64_for(dtype: str):
    """float64 work (--dtype float64, the numeric reference) with jax_enable_x64 on: JAX makes
    float32 arrays of float64 values without it. A float32 run keeps the file's own setting (JAX's
    default, off), as the user's training runs: with x64 on, optax's simplex projection promoted
    its float32 output to float64 and its own custom_jvp refused the float32 tangent."""
    return jax.enable_x64(True) if dtype == "float64" else contextlib.nullcontext()


def adapter() -> JaxAdapter:
    return JaxAdapter()
