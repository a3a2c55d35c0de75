"""PyTorch: find Functions and Modules, build them per mode, differentiate. Worker-only."""

from __future__ import annotations

import contextlib
import inspect

import numpy as np
import torch

from gradviz.backends import torch_devices, torch_grad_dtypes
from gradviz.backends.adapter import AdapterBase, BuiltBase
from gradviz.backends.first_build import FirstBuild
from gradviz.backends.graphs import differentiable, leaf_array
from gradviz.backends.introspect import function_apply
from gradviz.backends.torch_grads import first_backward, training_grads
from gradviz.backends.torch_numeric_kit import F, NumericKit
from gradviz.backends.torch_op_kinds import custom_op_body, op_kind
from gradviz.backends.torch_overrides import (
    OverrideKept,
    aliases_missed,
    default_apply,
    functions_as_default,
    kept_message,
    overrides_in_graph,
    uses_setup_context,
)
from gradviz.model import FROZEN

_DTYPES = {"float32": torch.float32, "float64": torch.float64}
_FROZEN = (
    f"{FROZEN} (requires_grad=False): kept at the value the module built, not seeded, "
    "not perturbed by the numeric reference"
)
_NO_PATH = (
    "no gradient path: the forward cuts the graph (.detach(), .data, numpy, or an op "
    "without a derivative), so autograd never reaches this tensor"
)


class Built(BuiltBase):
    """One op ready to call in one mode; a Module's parameters by named_parameters() name."""

    is_tensor = staticmethod(torch.is_tensor)

    def __init__(self, call, module=None, patch=None):
        named = dict(module.named_parameters()) if module is not None else {}
        # only trainable parameters are seeded, differentiated and perturbed; frozen ones
        # (requires_grad=False) are shown with "no gradient: frozen" (DESIGN.md "Parameters")
        super().__init__(
            call,
            {n: p for n, p in named.items() if p.requires_grad},
            patch,
            frozen={n: p for n, p in named.items() if not p.requires_grad},
        )
        self.module = module
        # the default mode without a user reference: no custom backward may remain in its graph
        self.check_overrides = patch is functions_as_default

    def param_shape(self, name):
        return tuple(self._params[name].shape)

    def get_param(self, name):
        return self._params[name].detach().cpu().double().numpy().copy()

    def set_param(self, name, values):
        p = self._params[name]
        with torch.no_grad():
            p.copy_(torch.as_tensor(np.asarray(values), dtype=p.dtype, device=p.device))


class TorchAdapter(AdapterBase):
    name = "torch"

    def __init__(self):
        # the frozen parameters and buffers of a request's first Module build (its plans)
        self._fixed = FirstBuild()

    # Process-wide settings a file may change at import; each file keeps its own (user_state).
    def settings(self) -> tuple:
        return (torch.get_default_dtype(), torch.is_grad_enabled())

    def apply_settings(self, settings: tuple) -> None:
        dtype, grad = settings
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)

    def seed_random(self, seed: int) -> None:
        """The same random stream for every mode: a dropout mask drawn in the forward is the
        same in custom and default (unseeded, they differed and read as a changed forward)."""
        torch.manual_seed(seed)

    def version(self) -> str:
        return str(torch.__version__)  # TorchVersion would import torch where unpickled

    # --- devices (torch_devices) -------------------------------------------------------------
    def devices(self) -> list[dict]:
        return torch_devices.devices()

    def resolve_device(self, spec: str) -> str:
        return torch_devices.resolve_device(spec)

    # --- finding ops (the walk is AdapterBase.find_ops) --------------------------------------
    def classify(self, obj, own: bool, named: bool, qualname: str) -> tuple[str | None, str]:
        return op_kind(obj, own, named, qualname)

    def defining(self, obj, kind: str):
        return custom_op_body(obj) if kind == "custom_op" else obj

    def forward_params(self, obj, info_or_kind) -> list[inspect.Parameter]:
        kind = getattr(info_or_kind, "kind", info_or_kind)
        if kind == "custom_op":
            return list(inspect.signature(custom_op_body(obj)).parameters.values())
        if kind == "function":
            params = list(inspect.signature(obj.forward).parameters.values())
            return params if uses_setup_context(obj) else params[1:]
        return list(inspect.signature(obj.forward).parameters.values())[1:]

    # --- modes ---------------------------------------------------------------------------------
    def build(self, obj, info, mode, dtype, device, module, meta, plans) -> Built:
        reference = meta.get("reference")
        if info.kind == "custom_op":
            if mode == "custom":
                return Built(obj)
            if reference is not None:
                return Built(reference)
            return Built(custom_op_body(obj), patch=functions_as_default)
        if info.kind == "function":
            if mode == "custom":
                return Built(function_apply(obj))
            if reference is not None:
                return Built(reference)
            return Built(default_apply(obj), patch=functions_as_default)
        with _default_dtype(_DTYPES[dtype]):
            instance = obj()
        instance = instance.to(device=device, dtype=_DTYPES[dtype])
        self._same_fixed_state(instance, plans)
        if mode == "custom":
            return Built(instance, instance)
        if reference is not None:
            return Built(lambda *a, **k: reference(instance, *a, **k), instance)
        return Built(instance, instance, functions_as_default)

    def _same_fixed_state(self, module, plans) -> None:
        """Frozen parameters and buffers keep what the request's first build made of them
        (first_build): a random one drawn at each build made each mode another forward."""
        state = [p for p in module.parameters() if not p.requires_grad] + list(module.buffers())
        kept = self._fixed.values(
            plans, [tuple(t.shape) for t in state], lambda: [t.detach().clone() for t in state]
        )
        with torch.no_grad():
            for t, k in zip(state, kept or ()):
                t.copy_(k.to(device=t.device, dtype=t.dtype))

    def differentiate(self, graph, built, dtype, device, probe=None) -> dict:
        tdtype = _DTYPES[dtype]
        fixed = [leaf.name for leaf in graph.leaves if not differentiable(leaf.values)]
        # int64 / bool inputs keep their dtype and need no gradient (DESIGN.md "Op modules")
        leaves = {
            leaf.name: torch.tensor(leaf.values, device=device)
            if leaf.name in fixed
            else torch.tensor(leaf.values, dtype=tdtype, device=device, requires_grad=True)
            for leaf in graph.leaves
        }
        recorded: dict[str, tuple] = {}
        # Values as they were before the op ran: an in-place forward would otherwise show its
        # result as the input while numeric was taken at the original (DESIGN.md, GV605).
        owned = [*leaves.items(), *built.params().items(), *built.frozen.items()]
        before = {n: _np(t).copy() for n, t in owned}
        versions = {n: t._version for n, t in owned}

        inputs = {id(t) for _, t in owned}

        def rec(name, t, role):
            if id(t) in inputs and torch.is_tensor(t):
                # an output that is an input tensor itself (a forward returning x as it is, or
                # a Function's default forward): its gradient was the input's whole gradient,
                # not the loss's through this output, and a correct op read `differs` at out
                t = t.view_as(t)
            recorded[name] = (t, role)
            before[name] = _np(t).copy()
            versions[name] = t._version
            return t

        with torch.enable_grad():
            loss = graph.forward(leaves, built.call_op, rec, F)
        tensors = {**dict(owned), **{n: t for n, (t, _) in recorded.items()}}
        written = {n for n, v in versions.items() if tensors[n]._version != v}
        kept = overrides_in_graph([loss]) if built.check_overrides else []
        if kept:
            raise OverrideKept(kept_message(kept), again=aliases_missed())
        targets = [
            (n, t, "input" if leaf.role == "input" else "param")
            for leaf, (n, t) in zip(graph.leaves, leaves.items())
            if n not in fixed
        ]
        targets += [(n, p, "param") for n, p in built.params().items()]
        targets += [(n, t, role) for n, (t, role) in recorded.items()]
        returned = torch_grad_dtypes.watch(loss, targets)  # filled by the backward below
        grads, probes, skipped = training_grads(loss, targets, probe)
        got = {}
        for name, t, role in targets:
            g = grads[name]
            got[name] = {
                "role": role,
                "value": before.get(name, _np(t)),
                "grad": None if g is None else _np(g),
                "why": "" if g is not None else _NO_PATH,
                "inplace": name in written,
                "probe": _np(probes[name]) if name in probes else None,
                "grad_dtype": returned.get(name),
            }
            if skipped and role in ("input", "param"):
                got[name]["probe_skipped"] = skipped
        for name in built.frozen:
            got[name] = {
                "role": "param",
                "value": before[name],
                "grad": None,
                "why": _FROZEN,
                "frozen": True,
                "inplace": name in written,
            }
        for name in fixed:
            got[name] = {
                "role": "input",
                "value": before[name],
                "grad": None,
                "why": "",
                "inplace": name in written,
            }
        return got

    def numeric_kit(self, device) -> NumericKit:
        return NumericKit(device)

    def evaluate(self, graph, built, leaves: dict, inject: dict, device) -> float:
        # a copy: an in-place forward must not write into the values gradviz reports
        tensors = {n: torch.tensor(leaf_array(v), device=device) for n, v in leaves.items()}

        def rec(name, t, role):
            if name in inject:
                return t + torch.as_tensor(inject[name], dtype=t.dtype, device=t.device)
            return t

        with torch.no_grad():
            return float(graph.forward(tensors, built.call_op, rec, F))


def _np(t) -> np.ndarray:
    # A view, not a copy: the array keeps the tensor's memory alive until it is sent.
    return t.detach().cpu().numpy()


@contextlib.contextmanager
def _default_dtype(dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def adapter() -> TorchAdapter:
    first_backward()
    return TorchAdapter()
