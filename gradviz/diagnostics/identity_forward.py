"""Whether an op's forward is the identity on one of its inputs, by its source and its numbers:
every return hands the argument back unchanged (x, x.view_as(x), x.clone(), tf.identity(x),
jnp.asarray(x)) and the run's output equals the input's values. A backward of minus the upstream
on an identity is a gradient reversal by construction (DANN's ReverseLayerF, TF's
flip_gradient), whatever the op is called: nobody derives -1 as the derivative of x by mistake.
Both must hold, so a clamp or a relu that the drawn inputs leave unchanged is not one."""

from __future__ import annotations

import ast

import numpy as np

from gradviz.diagnostics import source
from gradviz.diagnostics.context import Context

_SAME_METHODS = ("view_as", "clone")  # x.view_as(x), x.clone()
_SAME_CALLS = ("identity", "clone", "asarray")  # tf.identity(x), torch.clone(x), jnp.asarray(x)


def evidence(ctx: Context, tensor: str) -> str:
    """'its forward returns x unchanged (file:line)', or "" when source or numbers say not."""
    fwd = ctx.forward()
    if not tensor or not isinstance(fwd, source.FuncDef) or not _numbers_say_identity(ctx, tensor):
        return ""
    rets = source.returns(fwd)
    if not rets or not all(_hands_back(_value_of(r.value), tensor) for r in rets):
        return ""
    return f"its forward returns {tensor} unchanged, at {source.line_of(ctx.file, rets[0])}"


def _value_of(node):
    """The forward's value of a return: a custom_gradient's (y, grad) gives y."""
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        return node.elts[0]
    return node


def _hands_back(node, name: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _SAME_METHODS:
        target = func.value
        same_arg = all(isinstance(a, ast.Name) and a.id == name for a in node.args)
        return isinstance(target, ast.Name) and target.id == name and same_arg
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return (
        called in _SAME_CALLS
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == name
    )


def _numbers_say_identity(ctx: Context, tensor: str) -> bool:
    ins = [t for t in ctx.result.tensors if t.name == tensor and t.role == "input"]
    outs = [t for t in ctx.result.tensors if t.role == "output"]
    if len(ins) != 1 or ins[0].value is None:
        return False
    x = np.asarray(ins[0].value)
    return any(
        o.value is not None and np.shape(o.value) == x.shape and np.array_equal(o.value, x)
        for o in outs
    )
