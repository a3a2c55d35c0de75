"""The findings of diagnostics/causes.py in plain words, with the numbers they rest on and the
fix; and whether an op says it reverses its gradient on purpose (its name or its text)."""

from __future__ import annotations

import ast
import re

import numpy as np

from gradviz.diagnostics import identity_forward, jax_words, source
from gradviz.diagnostics.context import Context
from gradviz.diagnostics.finding import Finding

# an op that reverses its gradient by design: GradReverse, GradientReversalLayer, grad_reverse,
# RevGrad, GRL, or a docstring / comment that says "gradient reversal", "reverses the gradient"
_NAME = re.compile(r"(rev\w*grad|grad\w*rev|\bgrl|grl\b|_grl|grl_|revgrad)", re.IGNORECASE)
_TEXT = re.compile(
    r"gradients?\s+revers|revers\w*\s+(?:the\s+|its\s+)?gradient|"
    r"\bgrl\b|domain[- ]adversarial",
    re.IGNORECASE,
)


def num(x: float) -> str:
    return f"{x:.4g}"


def reversal_evidence(ctx: Context, tensor: str = "") -> str:
    """Why the op reads as an intended gradient reversal ("named GradReverse", "its docstring
    says 'gradient reversal'", its forward the identity on `tensor`), or "" when nothing about
    it says so."""
    holders = [n for n in (ctx.node, _holder_of(ctx)) if n is not None]
    for name in [ctx.op, ctx.qualname.rsplit(".", 1)[-1], *(h.name for h in holders)]:
        if name and _NAME.search(name):
            return f"it is named {name}"
    lines = _lines(ctx.file)
    for h in holders:
        text = "\n".join(lines[h.lineno - 1 : h.end_lineno or h.lineno])
        m = _TEXT.search(text)
        if m:
            return f"its source says '{m.group(0).strip()}' ({ctx.file}:{h.lineno})"
    return identity_forward.evidence(ctx, tensor)


def _holder_of(ctx: Context):
    """The top-level def holding the backward (a Function a Module calls, its custom_gradient)."""
    bw = ctx.backward()
    if bw is None or ctx.tree is None:
        return None
    for n in ctx.tree.body:
        if isinstance(n, (ast.ClassDef, *source.FuncDef)) and n.lineno <= bw.lineno <= (
            n.end_lineno or n.lineno
        ):
            return n
    return None


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _shape(shape) -> str:
    shape = tuple(int(s) for s in shape)
    return "(" + ", ".join(map(str, shape)) + (",)" if len(shape) == 1 else ")")


def _at(index) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


def _shape_note(t, c) -> str:
    want = tuple(t.value.shape) if t.value is not None else tuple(t.shape)
    return (
        ""
        if tuple(c.shape) == want
        else (f"; it also has shape {_shape(c.shape)} where '{t.name}' has {_shape(want)} (GV102)")
    )


def permuted(ctx: Context, t, c, ref, p: tuple) -> Finding:
    truth = ref.values
    moved = truth.transpose(p)
    flat = np.abs(c.reshape(-1) - truth.reshape(-1))
    i = int(flat.argmax())  # where it differs most from its own truth
    j = np.unravel_index(i, moved.shape)  # that element in the moved layout ...
    q = [0] * truth.ndim
    for a, axis in enumerate(p):  # ... is truth[q] with q[p[a]] = j[a]
        q[axis] = j[a]
    own = np.unravel_index(i, truth.shape)
    example = (
        f"element {_at(own)} is {num(float(c.reshape(-1)[i]))}, the true gradient at "
        f"{_at(q)}, where its own is {num(float(truth[own]))}"
    )
    inverse = tuple(int(a) for a in np.argsort(p))
    if truth.ndim == 2:
        what = "the right gradient transposed"
        fix = (
            "Return the gradient in the input's layout: drop the extra .T / transpose (for y = "
            "x @ w: grad_x = g @ w.T, grad_w = x.T @ g), not a transposed one reshaped back."
        )
    else:
        what = f"the right gradient with its axes in the order {p}"
        fix = jax_words.say(
            ctx,
            "permute",
            f"Put the axes back in the input's order: permute / transpose the gradient with "
            f"the inverse order {inverse} (or undo the forward's permute with its inverse).",
            inverse=inverse,
        )
    return ctx.finding(
        "GV306-grad-transposed",
        "error",
        f"The custom gradient of '{t.name}' is {what}: read in order, its {c.size} elements "
        f"are those of {ref.words()}, of shape {_shape(truth.shape)} moved to "
        f"{_shape(moved.shape)} (for example {example}){_shape_note(t, c)}.",
        fix,
        ctx.backward_where(),
        tensor=t.name,
    )


def belongs(ctx: Context, t, o, c, ref, oref, swapped: bool) -> Finding:
    theirs = oref.words(f" of '{o.name}'")
    n_own = int(
        (
            np.abs(c.reshape(-1) - ref.values.reshape(-1))
            > ref.tol.atol_for(ref.values) + ref.tol.rtol * np.abs(ref.values.reshape(-1))
        ).sum()
    )
    if swapped:
        head = (
            f"The custom gradients of '{t.name}' and '{o.name}' are swapped: the custom "
            f"gradient of '{t.name}' equals {theirs} at all {c.size} "
            f"elements, and that of '{o.name}' equals the one of '{t.name}'"
        )
    else:
        head = (
            f"The custom gradient of '{t.name}' is the gradient of '{o.name}': it equals "
            f"{theirs} at all {c.size} elements"
        )
    return ctx.finding(
        "GV307-grads-swapped",
        "error",
        f"{head}, and differs from its own at {n_own} of {c.size}.",
        jax_words.say(
            ctx,
            "order",
            "Return one gradient per input in the order of the forward's arguments (backward "
            "returns grad_x, grad_w for forward(ctx, x, w); a TF grad function returns them in "
            "the order of the function's arguments), each the derivative with respect to that "
            "input.",
        ),
        ctx.backward_where(),
        tensor=t.name,
    )


def reduced(ctx: Context, t, o, c, ref, oref, wrong: tuple, right: tuple) -> Finding:
    full = oref.values
    theirs = oref.words(f" of '{o.name}'")
    tail = (
        f"{theirs} summed over axes {right}, the axes '{t.name}' was "
        f"broadcast along, is the true gradient of '{t.name}'"
    )
    if not wrong:
        head = (
            f"The custom gradient of '{t.name}' is not summed over its broadcast axes: it "
            f"equals the gradient of '{o.name}' {_shape(full.shape)} unreduced, while {tail}"
        )
    else:
        head = (
            f"The custom gradient of '{t.name}' is summed over the wrong axes: it equals "
            f"the gradient of '{o.name}' {_shape(full.shape)} summed over axes {wrong}, "
            f"while {tail}"
        )
    sum_ = ", ".join(map(str, right))
    return ctx.finding(
        "GV308-grad-wrong-axis",
        "error",
        f"{head}{_shape_note(t, c)}.",
        jax_words.say(
            ctx,
            "axis",
            f"Sum the incoming gradient over exactly the axes '{t.name}' was broadcast along "
            f"(g.sum(dim=({sum_},)) in torch, tf.reduce_sum(g, axis=[{sum_}]) in TF), then "
            f"reshape it to the shape of '{t.name}'.",
            name=t.name,
            axes=sum_,
        ),
        ctx.backward_where(),
        tensor=t.name,
    )
