"""PyTorch autograd.Function tutorial traps: save_for_backward misuse (GV604) and an in-place
forward without ctx.mark_dirty (GV605). Found in the source of the op's own Function."""

from __future__ import annotations

import ast
import re

from gradviz.diagnostics import source
from gradviz.diagnostics.context import Context
from gradviz.vocab import Framework

_SAVE_NON_TENSOR = re.compile(
    r"save_for_backward can only save variables, but argument (\d+) is "
    r"of type (\w+)"
)
_LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation"
_NOT_INPLACE = {"requires_grad_", "retain_grad", "register_hook", "share_memory_"}


def check(ctx: Context) -> list:
    if ctx.framework != Framework.TORCH:
        return []
    out = _source_checks(ctx, _save_error(ctx))
    if not any(f.code == "GV605-inplace-no-mark-dirty" for f in out):
        out += _inplace_at_run_time(ctx)
    return out


def _inplace_at_run_time(ctx: Context) -> list:
    """The version counter saw the op write an input (e.g. `torch.clamp(x, out=x)`), whatever
    the source looks like."""
    if not ctx.result.inplace_inputs:
        return []
    name = ctx.result.inplace_inputs[0]
    fwd = ctx.forward()
    where = source.line_of(ctx.file, fwd) if fwd is not None else ctx.op_where()
    return [
        ctx.finding(
            "GV605-inplace-no-mark-dirty",
            "warning",
            f"The op wrote its input '{name}' in place while it ran (torch's version counter of "
            f"'{name}' changed), so the caller's tensor is silently overwritten; gradviz shows "
            f"'{name}' as it was before the op.",
            f"Work on a copy ({name} = {name}.clone()) or out of place; in an autograd.Function "
            f"that means it, call ctx.mark_dirty({name}) and return {name}.",
            where or ctx.op_where(),
            tensor=name,
        )
    ]


def _source_checks(ctx: Context, out: list) -> list:
    cls = ctx.node
    if not isinstance(cls, ast.ClassDef) or source.method(cls, "backward") is None:
        return out
    fwd = source.method(cls, "forward")
    if fwd is None:
        return out
    setup = source.method(cls, "setup_context")
    skip = (0 if setup is not None else 1) + (1 if source.is_classmethod(fwd) else 0)
    tensor_args = _tensor_params(fwd, skip)
    fed = {t.name for t in ctx.result.tensors if t.role == "input"}
    if fed:  # the run knows which arguments were tensors: `dim=-1` was not
        tensor_args &= fed
    if not out:
        out += _save_misuse(ctx, [m for m in (fwd, setup) if m is not None], tensor_args, fwd)
    out += _inplace(ctx, cls, fwd, tensor_args)
    return out


def _tensor_params(fn, skip: int) -> set:
    """Forward parameters that are (probably) tensors: those without a literal non-None
    default (`k=None` may be a tensor; `dim=-1`, `scale=(1, 2)` are not)."""
    defaults = source.param_defaults(fn)
    return {
        p.arg
        for p in source.params(fn, skip)
        if p.arg not in defaults or _literal(defaults[p.arg]) is None
    }


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def _save_error(ctx: Context) -> list:
    for _, err in ctx.errors():
        m = _SAVE_NON_TENSOR.search(err.message)
        if m:
            return [
                ctx.finding(
                    "GV604-save-for-backward",
                    "error",
                    f"save_for_backward got a {m.group(2)} as argument {m.group(1)}, but it can save "
                    "only tensors.",
                    f"Save only tensors with ctx.save_for_backward(...); keep the {m.group(2)} as a "
                    "ctx attribute (e.g. ctx.k = k).",
                    _save_call_line(ctx) or err.where,
                )
            ]
    return []


def _save_call_line(ctx: Context) -> str:
    # torch checks the saved values after forward returns, so its error has no user frame.
    cls = ctx.node if isinstance(ctx.node, ast.ClassDef) else None
    for n in ast.walk(cls) if cls is not None else ():
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "save_for_backward"
        ):
            return source.line_of(ctx.file, n)
    return ""


def _save_misuse(ctx: Context, methods, tensor_args: set, fwd) -> list:
    calls, attrs = [], []
    returned = {r.value.id for r in source.returns(fwd) if isinstance(r.value, ast.Name)}
    for m in methods:
        for n in source.own_nodes(m):
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "save_for_backward"
            ):
                calls.append(n)
            elif isinstance(n, ast.Assign):
                for t in n.targets:
                    if (
                        isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == "ctx"
                        and isinstance(n.value, ast.Name)
                        and n.value.id in (tensor_args | returned)
                    ):
                        attrs.append((n, t.attr, n.value.id))
    out = []
    if len(calls) > 1:
        out.append(
            ctx.finding(
                "GV604-save-for-backward",
                "warning",
                f"ctx.save_for_backward is called {len(calls)} times; each call replaces what the "
                "previous one saved, so ctx.saved_tensors holds only the last call's tensors.",
                "Save everything in one call: ctx.save_for_backward(a, b, ...).",
                source.line_of(ctx.file, calls[1]),
            )
        )
    for call in calls:
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Constant):
                out.append(
                    ctx.finding(
                        "GV604-save-for-backward",
                        "error",
                        f"save_for_backward gets the constant {a.value!r} as argument {i}, but it "
                        "can save only tensors.",
                        "Keep non-tensors as ctx attributes (ctx.k = k) and save only tensors.",
                        source.line_of(ctx.file, call),
                    )
                )
    for n, attr, name in attrs:
        what = "output" if name in returned else "input"
        out.append(
            ctx.finding(
                "GV604-save-for-backward",
                "warning",
                f"The forward {what} tensor '{name}' is stored as ctx.{attr} instead of with "
                "save_for_backward, which skips the in-place modification check"
                + (" and leaks memory through a reference cycle." if what == "output" else "."),
                f"Use ctx.save_for_backward({name}) in forward and read it back from "
                "ctx.saved_tensors in backward.",
                source.line_of(ctx.file, n),
                tensor=name,
            )
        )
    return out


def _inplace(ctx: Context, cls, fwd, tensor_args: set) -> list:
    if any(isinstance(n, ast.Attribute) and n.attr == "mark_dirty" for n in ast.walk(cls)):
        return []
    hit = None
    for n in source.own_nodes(fwd):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            f = n.func
            if (
                isinstance(f.value, ast.Name)
                and f.value.id in tensor_args
                and f.attr.endswith("_")
                and not f.attr.startswith("_")
                and f.attr not in _NOT_INPLACE
            ):
                hit = hit or (n, f"{f.value.id}.{f.attr}(...)", f.value.id)
        elif (
            isinstance(n, ast.AugAssign)
            and isinstance(n.target, ast.Name)
            and n.target.id in tensor_args
        ):
            hit = hit or (n, f"{n.target.id} {_op(n.op)}= ...", n.target.id)
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.value, ast.Name)
                    and t.value.id in tensor_args
                ):
                    hit = hit or (n, f"{t.value.id}[...] = ...", t.value.id)
        if isinstance(n, ast.Assign):
            for t in n.targets:  # x = x.clone() first makes later in-place ops safe
                if isinstance(t, ast.Name) and t.id in tensor_args and hit is None:
                    tensor_args = tensor_args - {t.id}
    if hit is None:
        return []
    node, what, name = hit
    raised = any(_LEAF_INPLACE in e.message for _, e in ctx.errors())
    extra = (' (the default mode already failed with "' + _LEAF_INPLACE + '")') if raised else ""
    return [
        ctx.finding(
            "GV605-inplace-no-mark-dirty",
            "warning",
            f"The forward modifies its input '{name}' in place (`{what}`) without ctx.mark_dirty"
            f"({name}), so the caller's tensor is silently overwritten and autograd's saved copies "
            f"of it go stale{extra}.",
            f"Call ctx.mark_dirty({name}) and return {name}, or work on a copy "
            f"({name} = {name}.clone()) or out-of-place ({name} * 2 instead of {name}.mul_(2)).",
            source.line_of(ctx.file, node),
            tensor=name,
        )
    ]


def _op(op) -> str:
    return {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}.get(type(op), "op")
