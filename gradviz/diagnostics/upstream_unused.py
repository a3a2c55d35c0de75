"""A backward that never reads the gradient coming into it (GV108): whatever the loss above the
op, it returns the same gradient, which the chain rule never allows. Under upstream ones (the
default) it can even equal the true gradient, so the run reads match: the source says otherwise.
Found in the backward's own code; uses only for a shape or dtype (ones_like(g), g.shape) do not
count as reading it."""

from __future__ import annotations

import ast

from gradviz.diagnostics import jax_words, source
from gradviz.diagnostics.context import Context
from gradviz.vocab import Framework

_SHAPE_ONLY_CALLS = {
    "ones_like",
    "zeros_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "shape",
    "size",
    "len",
    "numel",
    "rank",
}
_SHAPE_ONLY_ATTRS = {
    "shape",
    "dtype",
    "device",
    "ndim",
    "size",
    "numel",
    "dim",
    "new_ones",
    "new_zeros",
    "new_full",
    "new_empty",
    "get_shape",
    "is_cuda",
    "layout",
}


def check(ctx: Context) -> list:
    bw = ctx.backward()
    if bw is None:
        return []
    names = _grad_params(ctx, bw)
    if not names or _reads_any(bw, names) or _returns_nothing(bw):
        return []
    shown = ", ".join(f"'{n}'" for n in names)
    jax = ctx.framework == Framework.JAX
    part, what = ("bwd", "cotangent") if jax else ("backward", "gradient")
    fix = jax_words.say(
        ctx,
        "upstream_fix",
        f"Multiply by the incoming gradient: return {names[0]} * (the derivative of the "
        "forward), one per input.",
        g=names[0],
    )
    return [
        ctx.finding(
            "GV108-upstream-unused",
            "error",
            f"The {part} never uses the {what} coming into it ({shown}): it returns the same "
            "gradient whatever the loss above the op, which the chain rule does not allow. With "
            "upstream ones it can still equal the true gradient and read match here.",
            fix,
            source.line_of(ctx.file, bw),
        )
    ]


def _grad_params(ctx: Context, bw) -> list[str]:
    """The parameters of the backward that receive the upstream gradients."""
    a = bw.args
    params = [p.arg for p in a.posonlyargs + a.args]
    if ctx.framework == Framework.JAX:  # bwd(*nondiff, res, g); a tangent rule has no upstream
        rule = ctx.jax_rule()
        return rule.upstream(params) if rule is not None and rule.kind == "custom_vjp" else []
    if ctx.framework == Framework.TORCH:  # a Function's backward(ctx, *grads); TF's grad(*grads)
        params = params[2:] if source.is_classmethod(bw) else params[1:]  # (cls,) ctx
    params = [p for p in params if p != "variables"]
    if a.vararg is not None:
        params.append(a.vararg.arg)
    return params


def _reads_any(fn, names: list[str]) -> bool:
    wanted = set(names)
    parents = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in wanted and isinstance(node.ctx, ast.Load):
            if not _shape_only(node, parents):
                return True
    return False


def _shape_only(node, parents) -> bool:
    up = parents.get(node)
    if isinstance(up, ast.Attribute) and up.value is node and up.attr in _SHAPE_ONLY_ATTRS:
        return True
    if isinstance(up, ast.Call) and node in up.args:
        f = up.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name in _SHAPE_ONLY_CALLS
    return False


def _returns_nothing(fn) -> bool:
    """No return gives a gradient: every one gives None (GV105's business), or there is none at
    all (a backward that only raises, `raise NotImplementedError`: it returns no gradient that
    could ignore its upstream)."""
    if isinstance(fn, ast.Lambda):  # a JAX bwd written as a lambda: its body is what it returns
        rets = [ast.Return(value=fn.body)]
    else:
        rets = source.returns(fn)

    def none(v):
        return (
            v is None
            or (isinstance(v, ast.Constant) and v.value is None)
            or (isinstance(v, ast.Tuple) and all(none(e) for e in v.elts))
        )

    return all(none(r.value) for r in rets)
