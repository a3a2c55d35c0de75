"""PyTorch: discover Functions and Modules, build them per mode, differentiate. Worker-only."""
from __future__ import annotations

import contextlib
import inspect

import numpy as np
import torch

from gradviz.backends.introspect import definition_line, no_arg_constructible, tensors_of
from gradviz.model import OpInfo

_DTYPES = {"float32": torch.float32, "float64": torch.float64}
_NO_PATH = ("no gradient path: the forward cuts the graph (.detach(), .data, numpy, or an op "
            "without a derivative), so autograd never reaches this tensor")


class F:
    """The few tensor functions the graphs use."""
    sum = staticmethod(torch.sum)
    mean = staticmethod(torch.mean)

    @staticmethod
    def dense(x, w, b):
        return x @ w + b

    @staticmethod
    def const(arr, like):
        return torch.as_tensor(np.asarray(arr), dtype=like.dtype, device=like.device)

    @staticmethod
    def shape(t):
        return tuple(t.shape)


def _is_function(obj) -> bool:
    return (isinstance(obj, type) and issubclass(obj, torch.autograd.Function)
            and obj is not torch.autograd.Function and "backward" in _own_attrs(obj))


def _own_attrs(cls) -> set:
    names = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("torch."):
            break
        names |= set(vars(klass))
    return names


def _uses_setup_context(cls) -> bool:
    return "setup_context" in _own_attrs(cls)


class StandInCtx(torch.autograd.function.FunctionCtx):
    """The ctx a Function's forward gets when called directly for the default mode."""

    def __init__(self, args):
        super().__init__()
        self.needs_input_grad = tuple(torch.is_tensor(a) and a.requires_grad for a in args)

    def set_materialize_grads(self, value):
        pass


class Built:
    """One op ready to call in one mode: call_op(args) -> list of tensors, plus its parameters."""

    def __init__(self, call, module=None, patch=None):
        self._call = call
        self.module = module
        self._patch = patch or contextlib.nullcontext
        self._params = dict(module.named_parameters()) if module is not None else {}

    def call_op(self, args, kwargs):
        with self._patch():
            out = self._call(*args, **kwargs)
        return tensors_of(out, torch.is_tensor)

    def param_names(self):
        return list(self._params)

    def param_shape(self, name):
        return tuple(self._params[name].shape)

    def get_param(self, name):
        return self._params[name].detach().cpu().double().numpy().copy()

    def set_param(self, name, values):
        p = self._params[name]
        with torch.no_grad():
            p.copy_(torch.as_tensor(np.asarray(values), dtype=p.dtype, device=p.device))

    def params(self):
        return self._params


class TorchAdapter:
    name = "torch"

    def version(self) -> str:
        return str(torch.__version__)  # TorchVersion would import torch where unpickled

    # --- devices -------------------------------------------------------------------------------
    def devices(self) -> list[dict]:
        out = [{"name": "cpu", "kind": "cpu", "available": True, "reason": "", "label": "CPU"}]
        if torch.cuda.is_available():
            for i in range(torch.cuda.device_count()):
                out.append({"name": f"cuda:{i}", "kind": "gpu", "available": True, "reason": "",
                            "label": torch.cuda.get_device_name(i)})
        else:
            why = ("this torch is a CPU-only build" if torch.version.cuda is None
                   else "no NVIDIA GPU or driver found (torch.cuda.is_available() is False)")
            out.append({"name": "cuda:0", "kind": "gpu", "available": False, "reason": why,
                        "label": "CUDA GPU"})
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            out.append({"name": "mps", "kind": "gpu", "available": True, "reason": "",
                        "label": "Apple GPU"})
        return out

    def resolve_device(self, spec: str) -> str:
        spec = (spec or "auto").strip()
        low = spec.lower()
        if low == "auto":
            return "cuda:0" if torch.cuda.is_available() else "cpu"
        if low in ("cpu", "/cpu:0", "cpu:0"):
            return "cpu"
        if low.startswith("/gpu:"):
            low = "cuda:" + low.split(":", 1)[1]
        if low == "cuda":
            low = "cuda:0"
        if low.startswith("cuda:"):
            index = int(low.split(":", 1)[1])
            if not torch.cuda.is_available():
                why = ("this torch is a CPU-only build" if torch.version.cuda is None
                       else "torch.cuda.is_available() is False")
                raise ValueError(f"device {spec} is not available in torch: {why}")
            if index >= torch.cuda.device_count():
                raise ValueError(f"device {spec} is not available in torch: only "
                                 f"{torch.cuda.device_count()} CUDA device(s)")
            return low
        if low == "mps":
            return low
        raise ValueError(f"unknown device {spec!r}: use auto, cpu, cuda:N or /GPU:N")

    # --- discovery -----------------------------------------------------------------------------
    def discover(self, module, path: str) -> list[tuple[OpInfo, object]]:
        from gradviz.api import meta_of
        out = []
        for qualname, obj in vars(module).items():
            if not isinstance(obj, type) or obj.__module__ != module.__name__:
                continue
            if _is_function(obj):
                kind = "function"
            elif issubclass(obj, torch.nn.Module) and no_arg_constructible(obj):
                kind = "module"
            else:
                continue
            meta = meta_of(obj)
            line = definition_line(obj)
            info = OpInfo(name=meta["name"] or qualname, framework="torch", kind=kind,
                          qualname=qualname, file=path, line=line,
                          args=tuple(p.name for p in self.forward_params(obj, kind)),
                          doc=inspect.getdoc(obj) or "")
            out.append((info, obj))
        return out

    def forward_params(self, obj, info_or_kind) -> list[inspect.Parameter]:
        kind = getattr(info_or_kind, "kind", info_or_kind)
        if kind == "function":
            params = list(inspect.signature(obj.forward).parameters.values())
            return params if _uses_setup_context(obj) else params[1:]
        return list(inspect.signature(obj.forward).parameters.values())[1:]

    # --- modes ---------------------------------------------------------------------------------
    def build(self, obj, info, mode, dtype, device, module, meta, plans) -> Built:
        reference = meta.get("reference")
        if info.kind == "function":
            if mode == "custom":
                return Built(obj.apply)
            return Built(reference or _default_apply(obj))
        with _default_dtype(_DTYPES[dtype]):
            instance = obj()
        instance = instance.to(device=device, dtype=_DTYPES[dtype])
        if mode == "custom":
            return Built(instance, instance)
        if reference is not None:
            return Built(lambda *a, **k: reference(instance, *a, **k), instance)
        return Built(instance, instance, lambda: _functions_as_default(module))

    def differentiate(self, graph, built, dtype, device) -> dict:
        tdtype = _DTYPES[dtype]
        leaves = {leaf.name: torch.tensor(leaf.values, dtype=tdtype, device=device,
                                          requires_grad=True) for leaf in graph.leaves}
        recorded: dict[str, tuple] = {}

        def rec(name, t, role):
            recorded[name] = (t, role)
            return t

        with torch.enable_grad():
            loss = graph.forward(leaves, built.call_op, rec, F)
        targets = [(n, t, "input" if leaf.role == "input" else "param")
                   for leaf, (n, t) in zip(graph.leaves, leaves.items())]
        targets += [(n, p, "param") for n, p in built.params().items()]
        targets += [(n, t, role) for n, (t, role) in recorded.items()]
        live = [t for _, t, _ in targets if t.requires_grad]
        grads = []
        if live and loss.requires_grad:
            grads = list(torch.autograd.grad(loss, live, allow_unused=True))
        got, it = {}, iter(grads)
        for name, t, role in targets:
            g = next(it) if (t.requires_grad and loss.requires_grad) else None
            got[name] = {"role": role, "value": _np(t), "grad": None if g is None else _np(g),
                         "why": "" if g is not None else _NO_PATH}
        return got

    def evaluate(self, graph, built, leaves: dict, inject: dict, device) -> float:
        tensors = {n: torch.as_tensor(v, dtype=torch.float64, device=device)
                   for n, v in leaves.items()}

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


def _default_apply(cls):
    """Call the user's forward directly, so autograd differentiates it as written."""
    if _uses_setup_context(cls):
        return lambda *args, **kwargs: cls.forward(*args, **kwargs)

    def apply(*args, **kwargs):
        return cls.forward(StandInCtx(args), *args, **kwargs)
    return apply


@contextlib.contextmanager
def _functions_as_default(module):
    """While a Module runs in default mode, every Function of its file runs its forward directly."""
    patched = []
    for name, obj in list(vars(module).items()):
        if _is_function(obj):
            had = "apply" in vars(obj)
            patched.append((obj, had, vars(obj).get("apply")))
            obj.apply = staticmethod(_default_apply(obj))
        elif inspect.ismethod(obj) and _is_function(getattr(obj, "__self__", None)):
            patched.append((module, name, obj))  # `my_op = MyFn.apply` aliases
            setattr(module, name, _default_apply(obj.__self__))
    try:
        yield
    finally:
        for entry in reversed(patched):
            if entry[0] is module:
                setattr(module, entry[1], entry[2])
            else:
                cls, had, old = entry
                if had:
                    cls.apply = old
                else:
                    del cls.apply


def adapter() -> TorchAdapter:
    return TorchAdapter()
