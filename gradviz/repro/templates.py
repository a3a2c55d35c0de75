'''The text of a reproduction script: a common head and tail, and each framework's middle.

The script needs only its framework and numpy. It computes what gradviz computed for the op
graph (inputs -> op -> loss = sum(upstream * out)): custom (the op as written), default (the same
forward under the framework's own autodiff, as DESIGN.md's modes say) and the finite-difference
reference (central differences of the float64 loss, step 1e-6 * max(1, |value|) per element),
and prints each tensor's max |custom - default| and max |custom - numeric| as `gradviz run`'s
table does (3 significant digits).
'''

HEAD = '''"""Reproduction of gradviz's check of {name} ({framework}), defined at {where}.

Needs only {framework_package} and numpy (gradviz is not needed): python {script}
gradviz {version} ran it with: {settings}.
Graph: inputs -> op -> loss = sum(upstream * out). It prints, per tensor, the largest difference
between the custom gradient (your backward) and the default one (the framework's own autodiff of
the same forward), and between custom and the numeric one (central finite differences of the
float64 loss, step 1e-6 * max(1, |value|)), as gradviz's table did:
{reported}
"""
import importlib
import importlib.util
import os
import sys
import types

import numpy as np

OP_FILE = {op_file!r}
OP_PACKAGE = {package!r}        # (folder holding the package, dotted module name), or None
OP_NAME = {qualname!r}
KIND = {kind!r}
SEED = {seed!r}
RUN_DTYPE = {dtype!r}
DEVICE = {device!r}
# the op's arguments in order: (name, "tensor" | "const" | "default", passed by keyword)
CALL = {call!r}
CONSTS = {{{consts}}}
# the table's rows: each tensor with a gradient (frozen parameters print "-": they have none)
ROWS = {rows!r}
# tensors gradviz took no numeric reference of, and why (the script takes none either)
NO_NUMERIC = {no_numeric!r}
{data}

_LOADED = []


def load_op():
    """The op from its file, as gradviz imported it (a package file as its package's module);
    imported once."""
    if _LOADED:
        return _LOADED[0]
    try:
        import gradviz  # noqa: F401 - only its @gradviz.op marker is used by op files
    except ImportError:  # a stand-in: the marker changes nothing about the op
        stub = types.ModuleType("gradviz")

        def op(name=None, **_):
            return name if callable(name) else (lambda obj: obj)
        stub.op = op
        sys.modules["gradviz"] = stub
    if OP_PACKAGE is not None:
        sys.path.insert(0, OP_PACKAGE[0])
        module = importlib.import_module(OP_PACKAGE[1])
    else:
        sys.path.insert(0, os.path.dirname(OP_FILE))
        spec = importlib.util.spec_from_file_location("gradviz_repro_ops", OP_FILE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    _LOADED.append(getattr(module, OP_NAME))
    return _LOADED[0]


def arguments(tensors):
    """Tensors by position, constants and everything after the first one by keyword."""
    args, kwargs = [], {{}}
    for name, kind, keyword in CALL:
        if kind == "default":
            continue
        value = CONSTS[name] if kind == "const" else tensors[name]
        if kwargs or kind == "const" or keyword:
            kwargs[name] = value
        else:
            args.append(value)
    return args, kwargs


def outputs_of(raw):
    return list(raw) if isinstance(raw, (tuple, list)) else [raw]
'''

TAIL = '''

def max_abs(a, b):
    if a is None or b is None:
        return "-"
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    both = np.isfinite(a) & np.isfinite(b)
    return f"{{float(np.abs(a[both] - b[both]).max()) if both.any() else 0.0:.3g}}"


def main():
    op = load_op()
    custom, default, numeric = gradients(op, "custom"), gradients(op, "default"), numeric_of(op)
    rows = [("tensor", "shape", "|custom-default|", "|custom-numeric|")]
    for name, shape in ROWS:
        c = custom.get(name)
        rows.append((name, shape, max_abs(c, default.get(name)), max_abs(c, numeric.get(name))))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    print(f"{{OP_NAME}} ({{FRAMEWORK}}), {{RUN_DTYPE}} on {{DEVICE}}")
    for r in rows:
        print("  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip())
    for name, why in NO_NUMERIC.items():
        print(f"no numeric reference of {{name}}: {{why}}")


if __name__ == "__main__":
    main()
'''

TORCH = '''
import contextlib

import torch

FRAMEWORK = "torch"
_built64 = {{}}


def default_apply(op):
    """The forward called directly, so autograd differentiates it as written."""
    if "setup_context" in vars(op):
        return lambda *a, **k: op.forward(*a, **k)
    return lambda *a, **k: op.forward(torch.autograd.function.FunctionCtx(), *a, **k)


def overrides(cls):
    """A Function of the user's with its own backward: the default mode runs its forward."""
    return cls.__module__.split(".")[0] != "torch" and bool({{"backward", "vjp"}} & set(vars(cls)))


@contextlib.contextmanager
def functions_as_default():
    """Within: every user Function's apply runs its forward directly (the default mode of a
    Module), also where the op's module bound `Fn.apply` to a name of its own."""
    base, old = torch.autograd.Function, vars(torch.autograd.Function)["apply"]

    def apply(cls, *a, **k):
        return default_apply(cls)(*a, **k) if overrides(cls) else old.__func__(cls, *a, **k)
    module = sys.modules[getattr(load_op(), "__module__", "")]
    aliases = {{n: v for n, v in vars(module).items() if getattr(v, "__name__", "") == "apply"
               and isinstance(getattr(v, "__self__", None), type) and overrides(v.__self__)}}
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


def gradients(op, mode):
    """Every tensor's gradient of the loss in `mode`, as numpy (None where there is none)."""
    dtype = getattr(torch, RUN_DTYPE)
    leaves = {{n: torch.tensor(v, dtype=dtype if v.dtype.kind == "f" else None, device=DEVICE,
                               requires_grad=v.dtype.kind == "f") for n, v in INPUTS.items()}}
    args, kwargs = arguments(leaves)
    if KIND == "function":
        fn, named, scope = op.apply if mode == "custom" else default_apply(op), {{}}, None
    else:
        fn = build(op, dtype, PARAMS)
        named = dict(fn.named_parameters())
        scope = functions_as_default() if mode == "default" else None
    with scope or contextlib.nullcontext():
        outs = outputs_of(fn(*args, **kwargs))
    names = ["out"] + [f"out{{i}}" for i in range(1, len(outs))]
    kept = {{n: o for n, o in zip(names, outs) if n in UPSTREAM}}
    for o in kept.values():
        if o.requires_grad:
            o.retain_grad()
    loss = sum(torch.sum(torch.tensor(UPSTREAM[n], dtype=o.dtype, device=DEVICE) * o)
               for n, o in kept.items())
    if not loss.requires_grad:
        return {{}}                        # a forward without a graph: no gradient at all
    loss.backward()
    got = {{**leaves, **named, **kept}}
    return {{n: t.grad.cpu().numpy() for n, t in got.items() if t.grad is not None}}


def loss64(op, values, delta_at=None, delta=None, params=None):
    """The float64 loss of the custom forward at `values` (an output moved by `delta`; a
    Module's trainable parameters at `params`), and its outputs (before the move)."""
    with torch.no_grad():
        tensors = {{n: torch.tensor(v, dtype=torch.float64 if v.dtype.kind == "f" else None,
                                    device=DEVICE) for n, v in values.items()}}
        args, kwargs = arguments(tensors)
        if KIND == "function":
            fn = op.apply
        else:
            fn = _built64.get("module") or _built64.setdefault(
                "module", build(op, torch.float64, PARAMS64))
            named = dict(fn.named_parameters())
            for n, v in (params or PARAMS64).items():
                named[n].copy_(torch.tensor(v, dtype=torch.float64, device=DEVICE))
        outs = outputs_of(fn(*args, **kwargs))
        names = ["out"] + [f"out{{i}}" for i in range(1, len(outs))]
        total, seen = 0.0, {{}}
        for n, o in zip(names, outs):
            if n not in UPSTREAM:
                continue
            seen[n] = o.cpu().numpy()
            if n == delta_at:
                o = o + torch.tensor(delta, dtype=torch.float64, device=DEVICE)
            total = total + torch.sum(torch.tensor(UPSTREAM[n], dtype=torch.float64,
                                                   device=DEVICE) * o)
        return float(total), seen
'''

TF = '''
import tensorflow as tf

FRAMEWORK = "tf"


def call(op, mode):
    return op if mode == "custom" else (lambda *a, **k: op.__wrapped__(*a, **k)[0])


def gradients(op, mode):
    """Every tensor's gradient of the loss in `mode`, as numpy (None where there is none)."""
    dtype = getattr(tf, RUN_DTYPE)
    with tf.device(DEVICE):
        leaves = {{n: tf.constant(v, dtype=dtype if v.dtype.kind == "f" else None)
                   for n, v in INPUTS.items()}}
        with tf.GradientTape(persistent=True) as tape:
            for n, t in leaves.items():
                if INPUTS[n].dtype.kind == "f":
                    tape.watch(t)
            args, kwargs = arguments(leaves)
            outs = outputs_of(call(op, mode)(*args, **kwargs))
            names = ["out"] + [f"out{{i}}" for i in range(1, len(outs))]
            kept = {{n: o for n, o in zip(names, outs) if n in UPSTREAM}}
            loss = tf.add_n([tf.reduce_sum(tf.constant(UPSTREAM[n], dtype=o.dtype) * o)
                             for n, o in kept.items()])
        got = {{n: t for n, t in leaves.items() if INPUTS[n].dtype.kind == "f"}}
        got.update(kept)
        grads = tape.gradient(loss, got)
    return {{n: g.numpy() for n, g in grads.items() if g is not None}}


def loss64(op, values, delta_at=None, delta=None, params=None):
    """The float64 loss of the custom forward at `values` (an output moved by `delta`), and
    its outputs (before the move)."""
    with tf.device(DEVICE):
        tensors = {{n: tf.constant(v, dtype=tf.float64 if v.dtype.kind == "f" else None)
                    for n, v in values.items()}}
        args, kwargs = arguments(tensors)
        outs = outputs_of(op(*args, **kwargs))
        names = ["out"] + [f"out{{i}}" for i in range(1, len(outs))]
        total, seen = 0.0, {{}}
        for n, o in zip(names, outs):
            if n not in UPSTREAM:
                continue
            seen[n] = o.numpy()
            if n == delta_at:
                o = o + tf.constant(delta, dtype=tf.float64)
            total = total + tf.reduce_sum(tf.constant(UPSTREAM[n], dtype=tf.float64) * o)
        return float(total), seen
'''

NUMERIC = '''

def numeric_of(op):
    """Central differences of the float64 loss, element by element, for every float input and
    every output in the loss (an output moved by an added perturbation), at the float64 values
    a float32 input was rounded from (INPUTS64, where gradviz drew them)."""
    base = {{n: INPUTS64.get(n, v.astype(np.float64)) if v.dtype.kind == "f" else v
             for n, v in INPUTS.items()}}
    out = {{}}
    for name, v in base.items():
        if v.dtype.kind != "f" or name in NO_NUMERIC:
            continue
        flat = v.reshape(-1)
        grad = np.empty(flat.size)
        for i in range(flat.size):
            h = 1e-6 * max(1.0, abs(flat[i]))
            up, down = flat.copy(), flat.copy()
            up[i] += h
            down[i] -= h
            grad[i] = (loss64(op, {{**base, name: up.reshape(v.shape)}})[0]
                       - loss64(op, {{**base, name: down.reshape(v.shape)}})[0]) / (2 * h)
        out[name] = grad.reshape(v.shape)
    for name, v in PARAMS64.items():
        if name in NO_NUMERIC:
            continue
        flat = v.reshape(-1)
        grad = np.empty(flat.size)
        for i in range(flat.size):
            h = 1e-6 * max(1.0, abs(flat[i]))
            up, down = flat.copy(), flat.copy()
            up[i] += h
            down[i] -= h
            grad[i] = (loss64(op, base, params={{**PARAMS64, name: up.reshape(v.shape)}})[0]
                       - loss64(op, base, params={{**PARAMS64, name: down.reshape(v.shape)}})[0]
                       ) / (2 * h)
        out[name] = grad.reshape(v.shape)
    for name, w in UPSTREAM.items():
        if name in NO_NUMERIC:
            continue
        value = OUTPUTS[name].astype(np.float64).reshape(-1)   # the run's: it sizes the steps
        grad = np.empty(value.size)
        for i in range(value.size):
            h = 1e-6 * max(1.0, abs(value[i]))
            step = np.zeros(value.size)
            step[i] = h
            grad[i] = (loss64(op, base, name, step.reshape(w.shape))[0]
                       - loss64(op, base, name, -step.reshape(w.shape))[0]) / (2 * h)
        out[name] = grad.reshape(w.shape)
    return out
'''
