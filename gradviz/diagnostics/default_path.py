"""The default (autodiff) backward gives nothing: the forward cuts the graph with .detach(),
.data, numpy, or an op with no registered gradient (GV501). Points at the cutting line."""

from __future__ import annotations

import ast

from gradviz.compare import independent_of_output
from gradviz.diagnostics import source
from gradviz.diagnostics.context import Context
from gradviz.model import OVERRIDE_KEPT
from gradviz.vocab import Mode

_CUT_METHODS = {
    "detach": ".detach()",
    "numpy": ".numpy()",
    "item": ".item()",
    "tolist": ".tolist()",
    "detach_": ".detach_()",
}
_CUT_CALLS = {
    "stop_gradient": "tf.stop_gradient",
    "round": "tf.round (no registered gradient)",
    "floor": "tf.floor (no registered gradient)",
    "ceil": "tf.ceil (no registered gradient)",
    "argmax": "argmax",
    "argmin": "argmin",
    "py_function": "tf.py_function",
    "numpy_function": "tf.numpy_function",
    "no_grad": "torch.no_grad()",
}


def check(ctx: Context) -> list:
    if Mode.DEFAULT in ctx.result.mode_errors:
        return []
    cut = [
        t
        for t in ctx.result.tensors
        if t.role in ("input", "param")
        and Mode.DEFAULT in t.absent
        and not independent_of_output(t)
        and not t.absent[Mode.DEFAULT].startswith(OVERRIDE_KEPT)
    ]
    if not cut:
        return []
    names = ", ".join(f"'{t.name}'" for t in cut)
    custom_fills = all(Mode.CUSTOM in t.grads for t in cut)
    line, what = find_cut(ctx)
    at = f" at {what}" if what else ""
    if custom_fills:
        return [
            ctx.finding(
                "GV501-no-default-path",
                "info",
                f"{ctx.fw_name()}'s own autodiff of this forward gives no gradient to {names}: the "
                f"forward leaves the graph{at}; only your custom backward provides one, so gradviz "
                "can compare it with the numeric gradient only.",
                "Nothing to do if the custom gradient is meant to replace it; to compare with "
                "autodiff, keep the forward in differentiable tensor ops or pass reference= to "
                "@gradviz.op.",
                line or ctx.op_where(),
                tensor=cut[0].name,
            )
        ]
    return [
        ctx.finding(
            "GV501-no-default-path",
            "warning",
            f"No gradient reaches {names}: the forward leaves the graph{at} and no custom backward "
            "fills the gap.",
            "Keep the forward in differentiable tensor ops (no .detach(), .data, numpy, tf.round, "
            "tf.stop_gradient), or wrap it in a custom gradient that supplies one.",
            line or ctx.op_where(),
            tensor=cut[0].name,
        )
    ]


def find_cut(ctx: Context) -> tuple[str, str]:
    """('file:line', 'description') of the first graph cut in the op's forward (following the
    ops a Module / Layer calls), or ('', '')."""
    todo, seen = [ctx.qualname], set()
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        node = source.top_level(ctx.tree, name)
        fwd = source.forward_of(node)
        if fwd is None:
            continue
        hits = sorted(_cuts(fwd), key=lambda h: (h[0].lineno, h[0].col_offset))
        if hits:
            n, what = hits[0]
            return source.line_of(ctx.file, n), f"`{what}` (line {n.lineno})"
        todo += source.referenced_ops(ctx.tree, fwd)
    return "", ""


def _cuts(fn):
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and n.attr == "data" and not isinstance(n.ctx, ast.Store):
            yield n, ".data"
        elif isinstance(n, ast.Call):
            f = n.func
            name = source.dotted(f)
            root = name.split(".")[0] if name else ""
            if (
                isinstance(f, ast.Attribute)
                and f.attr in _CUT_METHODS
                and root not in ("np", "numpy")
            ):
                yield n, _CUT_METHODS[f.attr]
            elif root in ("np", "numpy") and name.count(".") >= 1:
                yield n, f"{name}(...) (numpy)"
            elif root in ("tf", "torch") and name.split(".")[-1] in _CUT_CALLS:
                last = name.split(".")[-1]
                if root == "torch" and last in ("round", "floor", "ceil"):
                    continue  # torch defines these gradients (as zero)
                yield n, _CUT_CALLS[last] if root == "tf" or last == "no_grad" else name
        elif isinstance(n, ast.With):
            for item in n.items:
                if source.dotted(getattr(item.context_expr, "func", item.context_expr)).endswith(
                    "no_grad"
                ):
                    yield n, "torch.no_grad()"
