"""The torch part of a reproduction script: the custom and default modes as gradviz's torch
backend runs them (loss.backward(), every leaf's .grad), and the float64 loss of the custom
forward that the numeric part differentiates."""

TORCH = '''
import contextlib

import torch

FRAMEWORK = "torch"
_built64 = {}


class K:
    """The graphs' tensor functions (gradviz's torch F)."""
    total = staticmethod(torch.sum)
    mean = staticmethod(torch.mean)

    @staticmethod
    def weighted_sum(w, t):
        return torch.sum(w * t)

    @staticmethod
    def dense(x, w, b):
        return x @ w + b

    @staticmethod
    def const(arr, like):
        return torch.as_tensor(np.asarray(arr), dtype=like.dtype, device=like.device)


def default_apply(op):
    """The forward called directly, so autograd differentiates it as written."""
    if "setup_context" in vars(op):
        return lambda *a, **k: op.forward(*a, **k)
    return lambda *a, **k: op.forward(torch.autograd.function.FunctionCtx(), *a, **k)


def overrides(cls):
    """A Function of the user's with its own backward: the default mode runs its forward."""
    return cls.__module__.split(".")[0] != "torch" and bool({"backward", "vjp"} & set(vars(cls)))


@contextlib.contextmanager
def functions_as_default():
    """Within: every user Function's apply runs its forward directly (the default mode of a
    Module), also where the op's module bound `Fn.apply` to a name of its own."""
    base, old = torch.autograd.Function, vars(torch.autograd.Function)["apply"]

    def apply(cls, *a, **k):
        return default_apply(cls)(*a, **k) if overrides(cls) else old.__func__(cls, *a, **k)
    module = load_op()[1]
    aliases = {n: v for n, v in vars(module).items() if getattr(v, "__name__", "") == "apply"
               and isinstance(getattr(v, "__self__", None), type) and overrides(v.__self__)}
    base.apply = classmethod(apply)
    for n, v in aliases.items():
        setattr(module, n, default_apply(v.__self__))
    try:
        yield
    finally:
        base.apply = old
        for n, v in aliases.items():
            setattr(module, n, v)


def build(op, dtype, params):
    """A Module as gradviz built it: seeded, made in the run's dtype (frozen parameters and
    buffers as that build made them), its trainable parameters set to `params`."""
    torch.manual_seed(SEED)
    before = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, RUN_DTYPE))
    try:
        module = op()
    finally:
        torch.set_default_dtype(before)
    module = module.to(device=DEVICE, dtype=getattr(torch, RUN_DTYPE)).to(dtype=dtype)
    named = dict(module.named_parameters())
    with torch.no_grad():
        for n, v in params.items():
            named[n].copy_(torch.tensor(v, dtype=dtype, device=DEVICE))
    return module


def mode_call(op, module, mode, dtype):
    """What the graph calls in `mode`, its module's named parameters, and the scope it runs in."""
    if KIND == "custom_op":         # torch.library.custom_op: its default is its Python body
        if mode == "custom":
            return op, {}, None
        if USES_REFERENCE:
            return reference_of(op, module), {}, None
        return op._init_fn, {}, functions_as_default()
    if KIND == "function":
        if mode == "custom":
            return op.apply, {}, None
        if USES_REFERENCE:
            return reference_of(op, module), {}, None
        return default_apply(op), {}, functions_as_default()
    built = build(op, dtype, PARAMS)
    named = dict(built.named_parameters())
    if mode == "custom":
        return built, named, None
    if USES_REFERENCE:
        reference = reference_of(op, module)
        return (lambda *a, **k: reference(built, *a, **k)), named, None
    return built, named, functions_as_default()


def gradients(mode):
    """Every tensor's gradient of the loss in `mode`, as numpy (None where there is none)."""
    op, module = load_op()
    dtype = getattr(torch, RUN_DTYPE)
    leaves = {n: torch.tensor(v, dtype=dtype if v.dtype.kind == "f" else None, device=DEVICE,
                              requires_grad=v.dtype.kind == "f") for n, v in LEAVES.items()}
    fn, named, scope = mode_call(op, module, mode, dtype)
    owned = {id(t) for t in [*leaves.values(), *named.values()]}
    recorded = {}

    def rec(name, t):
        if id(t) in owned:      # an output that is an input itself: its own gradient
            t = t.view_as(t)
        if t.requires_grad:
            t.retain_grad()
        recorded[name] = t
        return t
    with scope or contextlib.nullcontext():
        loss = graph_loss(fn, leaves, rec, K)
    if not torch.is_tensor(loss) or not loss.requires_grad:
        return {}                        # a forward without a graph: no gradient at all
    loss.backward()
    got = {**leaves, **named, **recorded}
    return {n: t.grad.cpu().numpy() for n, t in got.items() if t.grad is not None}


def loss64(leaves, params, inject=None):
    """The float64 loss of the custom forward at `leaves` (a Module's trainable parameters at
    `params`), with inject = (name, delta) added to that recorded tensor."""
    op, _ = load_op()
    with torch.no_grad():
        tensors = {n: torch.tensor(v, dtype=torch.float64 if v.dtype.kind == "f" else None,
                                   device=DEVICE) for n, v in leaves.items()}
        if KIND in ("function", "custom_op"):
            fn = op.apply if KIND == "function" else op
        else:
            fn = _built64.get("module") or _built64.setdefault(
                "module", build(op, torch.float64, PARAMS64))
            named = dict(fn.named_parameters())
            for n, v in params.items():
                named[n].copy_(torch.tensor(v, dtype=torch.float64, device=DEVICE))

        def rec(name, t):
            if inject is not None and name == inject[0]:
                return t + torch.as_tensor(inject[1], dtype=t.dtype, device=t.device)
            return t
        return float(graph_loss(fn, tensors, rec, K))
'''
