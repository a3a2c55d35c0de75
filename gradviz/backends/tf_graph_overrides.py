"""Reading a traced TensorFlow graph for the gradient overrides it holds, for the default mode
(tf_overrides): a graph traced before the default run keeps the custom gradients it was traced
with, and gradviz reports them rather than a default column that repeats custom. Worker-only.

An op with a `_gradient_op_type` attribute (set by `gradient_override_map`, which TensorFlow's
custom_gradient uses for its IdentityN in graph mode) takes its gradient from the function
registered under that name; for a custom_gradient that is TensorFlow's wrapper, whose closures
hold the user's `grad_fn`. The graph is read as a GraphDef, whose library holds every function
it calls, nested ones included.
"""

from __future__ import annotations

import inspect
import os

from tensorflow.python.framework import ops as _ops
from tensorflow.python.ops import custom_gradient as _cg

_CG_FILE = os.path.abspath(_cg.__file__)


def _grad_owner(fn):
    """The user-facing function behind a registered gradient: for a custom_gradient, the
    `grad_fn` its internal closures hold."""
    for _ in range(4):
        code = getattr(fn, "__code__", None)
        if code is None or os.path.abspath(code.co_filename) != _CG_FILE or not fn.__closure__:
            break
        cells = dict(zip(code.co_freevars, fn.__closure__))
        cell = cells.get("tape_grad_fn") or cells.get("grad_fn")
        if cell is None:
            break
        fn = cell.cell_contents
    return fn


def _from_saved_model(fn) -> bool:
    # TensorFlow's wrapper of a gradient function deserialized from a SavedModel: the saver's
    # custom gradient (SaveOptions(experimental_custom_gradients=True)), not TensorFlow's own
    code = getattr(fn, "__code__", None)
    return code is not None and os.path.basename(code.co_filename) == "function_deserialization.py"


def _describe(fn) -> str:
    fn = inspect.unwrap(getattr(fn, "__func__", fn))
    code = getattr(fn, "__code__", None)
    where = f" ({os.path.basename(code.co_filename)}:{code.co_firstlineno})" if code else ""
    return f"{getattr(fn, '__qualname__', fn)!s}{where}"


def overrides_in(cf, is_framework_own) -> list[str]:
    """Gradient overrides in a ConcreteFunction's graph and the functions it calls that are not
    the framework's own (`is_framework_own(grad function)`): custom_gradients traced with a
    user's grad, a gradient_override_map, a custom gradient loaded with a SavedModel."""
    try:
        graph_def = cf.graph.as_graph_def()
    except Exception:  # noqa: BLE001 - a graph that cannot be read: nothing to say about it
        return []
    nodes = list(graph_def.node)
    for f in graph_def.library.function:
        nodes.extend(f.node_def)
    found = []
    for node in nodes:
        if "_gradient_op_type" not in node.attr:
            continue
        name = node.attr["_gradient_op_type"].s.decode()
        try:
            registered = _ops._gradient_registry.lookup(name)
        except LookupError:  # TensorFlow raises for it when differentiating
            continue
        owner = _grad_owner(registered)
        if _from_saved_model(owner):
            found.append("a custom gradient loaded with a SavedModel")
        elif not name.startswith("CustomGradient-"):
            found.append(f"gradient_override_map {name!r} ({_describe(owner)})")
        elif not is_framework_own(owner):  # TensorFlow's / Keras's own are their autodiff
            found.append(f"the custom gradient {_describe(owner)}")
    return found
