"""What the runner, the numeric reference and the checks ask of a framework, written once.

`Adapter` is the Protocol torch_backend.TorchAdapter and tf_backend.TfAdapter implement;
`AdapterBase` holds the part both do the same way (finding the ops of an imported module), and
`BuiltBase` one op built for one mode (calling it, its parameters by name). The framework
modules supply only what differs: which objects are ops, how a mode is built, how a gradient is
taken. Worker-only, like every module of gradviz.backends.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import numpy as np

from gradviz.backends.introspect import (
    candidates,
    defined_at,
    definition_line,
    obj_is_own,
    tensors_of,
)
from gradviz.model import OpInfo


class TensorOps(Protocol):
    """The few tensor functions the graphs use (`Adapter.F`, `NumericKit.F`)."""

    sum: Callable
    mean: Callable

    @staticmethod
    def dense(x, w, b): ...

    @staticmethod
    def weighted_sum(w, t): ...  # sum(w * t): the op graphs' loss

    @staticmethod
    def const(arr, like): ...

    @staticmethod
    def shape(t) -> tuple: ...

    @staticmethod
    def non_differentiable(outs) -> set | None: ...


class Built(Protocol):
    """One op ready to call in one mode: call_op(args) -> its output tensors, and its parameters."""

    def call_op(self, args, kwargs) -> list: ...
    def param_names(self) -> list[str]: ...
    def param_shape(self, name: str) -> tuple: ...
    def get_param(self, name: str) -> np.ndarray: ...
    def set_param(self, name: str, values) -> None: ...
    def params(self) -> dict: ...


class NumericKit(Protocol):
    """What numeric_eval needs of a framework: float64 tensors on one device, a few functions."""

    F: ClassVar[Any]

    def scope(self) -> contextlib.AbstractContextManager: ...
    def tensor(self, arr, copy: bool = True): ...
    def numbers(self, t) -> np.ndarray: ...
    def version(self, t) -> int: ...
    def step(self, delta: np.ndarray, scale: float): ...  # (delta as a tensor, scale for axpy)
    def axpy(self, a, b, scale, out=None): ...  # a + scale * b; into `out` where the kit can
    # optional: mul(a, b, out=None), a * b into `out` where it can (the loss's product)
    def reduce(self, t, mean: bool): ...
    def matmul(self, a, b): ...
    def reshape(self, t, shape): ...
    def concat(self, ts): ...
    def param(self, built: Built, name: str): ...
    def assign(self, built: Built, name: str, t) -> None: ...


class Adapter(Protocol):
    """One framework as backends.runner.Backend drives it."""

    name: str
    F: ClassVar[Any]

    def settings(self) -> tuple: ...
    def apply_settings(self, settings: tuple) -> None: ...
    def seed_random(self, seed: int) -> None: ...
    def version(self) -> str: ...
    def devices(self) -> list[dict]: ...
    def resolve_device(self, spec: str) -> str: ...
    def find_ops(self, module, path: str) -> tuple[list[tuple[OpInfo, object]], list[str]]: ...
    def forward_params(self, obj, info_or_kind) -> list[inspect.Parameter]: ...
    def declared_params(self, obj, info_or_kind) -> list[inspect.Parameter]: ...
    def build(
        self, obj, info: OpInfo, mode: str, dtype: str, device: str, module, meta: dict, plans
    ) -> Built: ...
    def differentiate(
        self, graph, built: Built, dtype: str, device: str, probe=None
    ) -> dict: ...  # probe: upstream_probe.probe_upstream
    def numeric_kit(self, device: str) -> NumericKit: ...
    def evaluate(self, graph, built: Built, leaves: dict, inject: dict, device: str) -> float: ...


class BuiltBase:
    """Calling a built op (under its mode's patch) and naming its parameters; a framework's Built
    adds how a parameter is read and written."""

    is_tensor: ClassVar[Callable[[Any], bool]]

    def __init__(self, call, params: dict, patch=None, frozen: dict | None = None):
        self._call = call
        self._patch = patch or contextlib.nullcontext
        self._params = params
        # frozen parameters by name: shown ("no gradient: frozen"), never seeded or perturbed
        self.frozen = frozen or {}

    def call_op(self, args, kwargs):
        with self._patch():
            out = self._call(*args, **kwargs)
        return tensors_of(out, type(self).is_tensor)

    def window(self):
        """The mode's patch around a whole differentiation (TF): a grad function that runs code
        of the forward again (tf.recompute_grad) must see what the forward saw. The patch must
        be re-entrant: call_op enters it again inside."""
        return self._patch()

    def param_names(self):
        return list(self._params)

    def avoid_names(self, owns) -> dict:
        """A parameter named as one of the graph's tensors (a weight `b` in the seed graph, whose
        output is `b`) is named `self.b`: the two gradients shared one name, one overwrote the
        other and the verdict read `differs`. Returns {new name: attribute name}."""
        renamed: dict = {}
        self._params = _renamed(self._params, owns, renamed)
        self.frozen = _renamed(self.frozen, owns, renamed)
        return renamed

    def params(self):
        return self._params


def _renamed(params: dict, owns, renamed: dict) -> dict:
    if not any(owns(n) for n in params):
        return params
    out = {}
    for name, p in params.items():
        new = name
        while owns(new) or (new != name and new in params):
            new = "self." + new
        out[new] = p
        if new != name:
            renamed[new] = name
    return out


class AdapterBase:
    """Finding ops, the same walk for both frameworks; a framework says which objects are ops."""

    name: str

    def classify(self, obj, own: bool, named: bool, qualname: str) -> tuple[str | None, str]:
        """(kind, why not): kind is None for an object that is not an op; `why` says why an
        object that looks like one was left out ("" when there is nothing to say)."""
        raise NotImplementedError

    def defining(self, obj, kind: str):
        """The object whose source line and docstring the user sees for this op."""
        return obj

    def forward_params(self, obj, info_or_kind) -> list[inspect.Parameter]:
        """The arguments gradviz feeds the forward (without ctx / self)."""
        raise NotImplementedError

    def declared_params(self, obj, info_or_kind) -> list[inspect.Parameter]:
        """Every argument of the forward as written (without ctx / self): what metadata may
        name. The same as forward_params unless a framework leaves some out (Keras `training`)."""
        return self.forward_params(obj, info_or_kind)

    def find_ops(self, module, path: str) -> tuple[list[tuple[OpInfo, object]], list[str]]:
        """Ops (OpInfo, object) of the file, and "Name: why not" for what was left out."""
        from gradviz.api import meta_of, registered

        out, skipped = [], []
        for qualname, obj, named in candidates(module, registered(module)):
            kind, why = self.classify(obj, obj_is_own(obj, module), named, qualname)
            if why:
                skipped.append(f"{qualname}: {why}")
            if kind is None:
                continue
            target = self.defining(obj, kind)
            meta = meta_of(obj, module)
            info = OpInfo(
                name=meta["name"] or qualname,
                framework=self.name,
                kind=kind,
                qualname=qualname,
                file=path,
                line=definition_line(target),
                args=tuple(p.name for p in self.forward_params(obj, kind)),
                doc=inspect.getdoc(target) or "",
                defined_at=defined_at(obj, module),
                expect=tuple(meta.get("expect") or ()),
            )
            out.append((info, obj))
        return out, skipped
