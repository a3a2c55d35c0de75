"""The first part of a reproduction script: what it is (HEAD, filled in per op), how it loads
the op without gradviz, and the graph gradviz built around it (COMMON, the same in every script).

The graphs are DESIGN.md's, written as backends/graph_kinds.py and stack_graph.py write them:
`K` is the framework's few tensor functions (dense, weighted_sum, const, total, mean) and
`rec(name, t)` marks a named tensor (for its gradient, or a finite-difference injection).
"""

HEAD = '''"""Reproduction of gradviz's check of {name} ({framework}), defined at {where}.

Needs only {framework_package} and numpy (gradviz is not needed): python {script}
gradviz {version} ran it with: {settings}.
Graph: {graph_text}.
It prints, per tensor, the largest difference between the custom gradient (your backward) and
the default one ({default_text}), and between custom and the numeric one (central finite
differences of the float64 loss: step 1e-6 * max(1, |value|) per element, or along 16 seeded ±1
directions for a tensor of more than 256 elements), as gradviz's table did:
{reported}
"""
import importlib
import importlib.util
import os
import sys
import types
import zlib

import numpy as np

OP_FILE = {op_file!r}
OP_PACKAGE = {package!r}        # (folder holding the package, dotted module name), or None
OP_NAME = {qualname!r}
KIND = {kind!r}
SEED = {seed!r}
RUN_DTYPE = {dtype!r}
DEVICE = {device!r}
GRAPH = {graph!r}
DEPTH = {depth!r}
# the default mode differentiates the op's reference= function (the metadata of @gradviz.op)
USES_REFERENCE = {uses_reference!r}
# the op's arguments in order: (name, "tensor" | "const" | "default", passed by keyword)
CALL = {call!r}
CONSTS = {{{consts}}}
# the table's rows: each tensor with a gradient (frozen parameters print "-": they have none)
ROWS = {rows!r}
# tensors gradviz took no numeric reference of, and why (the script takes none either)
NO_NUMERIC = {no_numeric!r}
# the modes gradviz's run took: the script takes those (one left out prints "-", as the report)
MODES = {modes!r}
{data}
'''

COMMON = '''
_LOADED = []
_MARKS = []         # (object, metadata) of each @gradviz.op when gradviz is not importable


def _stand_in_gradviz():
    """A stand-in for gradviz's @gradviz.op marker: it changes nothing about the op and keeps
    the metadata (a reference= function is the default mode of its op)."""
    stub = types.ModuleType("gradviz")

    def op(name=None, **meta):
        if callable(name):
            _MARKS.append((name, {}))
            return name

        def mark(obj):
            _MARKS.append((obj, meta))
            return obj
        return mark
    stub.op = op
    sys.modules["gradviz"] = stub


def load_op():
    """The op from its file, as gradviz imported it (a package file as its package's module);
    imported once. Returns (op, its module)."""
    if _LOADED:
        return _LOADED[0]
    try:
        import gradviz  # noqa: F401 - only its @gradviz.op marker is used by op files
    except ImportError:
        _stand_in_gradviz()
    if OP_PACKAGE is not None:
        sys.path.insert(0, OP_PACKAGE[0])
        module = importlib.import_module(OP_PACKAGE[1])
    else:
        sys.path.insert(0, os.path.dirname(OP_FILE))
        spec = importlib.util.spec_from_file_location("gradviz_repro_ops", OP_FILE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    _LOADED.append((getattr(module, OP_NAME), module))
    return _LOADED[0]


def reference_of(op, module):
    """The op's reference= function, as @gradviz.op (or gradviz.op(...)(op)) gave it."""
    for obj, meta in _MARKS:
        if obj is op and meta.get("reference") is not None:
            return meta["reference"]
    from gradviz.api import meta_of     # gradviz is importable: its own record
    return meta_of(op, module)["reference"]


def arguments(tensors, first=None):
    """Tensors by position, constants and everything after the first one by keyword; the first
    tensor argument is `first` where the graph feeds it a tensor of its own."""
    args, kwargs = [], {}
    for name, kind, keyword in CALL:
        if kind == "default":
            continue
        if kind == "const":
            value = CONSTS[name]
        elif first is not None:
            value, first = first, None
        else:
            value = tensors[name]
        if kwargs or kind == "const" or keyword:
            kwargs[name] = value
        else:
            args.append(value)
    return args, kwargs


def outputs_of(raw):
    return list(raw) if isinstance(raw, (tuple, list)) else [raw]


def graph_loss(call, T, rec, K):
    """The loss of the graph gradviz built around the op (`call`), at tensors `T`."""
    if GRAPH == "op":
        args, kwargs = arguments(T)
        outs = outputs_of(call(*args, **kwargs))
        names = ["out"] + [f"out{i}" for i in range(1, len(outs))]
        loss = 0.0
        for n, o in zip(names, outs):
            if n in UPSTREAM:       # outputs without a gradient stay out of the loss
                o = rec(n, o)
                loss = loss + K.weighted_sum(K.const(UPSTREAM[n], o), o)
        return loss
    if GRAPH == "seed":             # parameter a -> op -> c = b * 23 -> loss = sum(c)
        args, kwargs = arguments(T, first=T["a"])
        b = rec("b", outputs_of(call(*args, **kwargs))[0])
        return K.total(rec("c", b * 23.0))
    if GRAPH == "mlp":              # x -> dense -> op -> dense -> mean-squared loss
        h = rec("h", K.dense(T["x"], T["w1"], T["b1"]))
        args, kwargs = arguments(T, first=h)
        out = rec("out", outputs_of(call(*args, **kwargs))[0])
        y = rec("y", K.dense(out, T["w2"], T["b2"]))
        diff = y - K.const(TARGET["y"], y)
        return K.mean(diff * diff)
    o = T["x"]                      # stack: x -> [dense_i -> op] for i = 1..DEPTH
    for i in range(1, DEPTH + 1):
        h = rec(f"h{i}", K.dense(o, T[f"w{i}"], T[f"b{i}"]))
        args, kwargs = arguments(T, first=h)
        o = rec(f"o{i}", outputs_of(call(*args, **kwargs))[0])
    return K.weighted_sum(K.const(UPSTREAM[f"o{DEPTH}"], o), o)
'''
