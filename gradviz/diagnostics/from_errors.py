"""Mistakes the frameworks report with an error, rewritten in plain words at the user's line:
gradient count, shape, device, dtype, gradients for non-tensor arguments (GV101-GV106)."""

from __future__ import annotations

import re

from gradviz.diagnostics import source
from gradviz.diagnostics.context import Context
from gradviz.vocab import Framework, Mode

_TORCH_COUNT = re.compile(
    r"returned an incorrect number of gradients \(expected (\d+), got (\d+)\)"
)
_TF_COUNT = re.compile(r"expected to return (\d+) gradients?, but returned (\d+)")
_TORCH_SHAPE = re.compile(
    r"invalid gradient at index (\d+) - got \[([^\]]*)\] but expected shape "
    r"compatible with \[([^\]]*)\]"
)
_TORCH_DEVICE = re.compile(r"invalid gradient at index (\d+) - expected device (\S+) but got (\S+)")
_TORCH_DTYPE = re.compile(
    r"invalid gradient at index (\d+) - expected (?:dtype|type) (\S+) but "
    r"got (\S+)"
)
_TORCH_NON_TENSOR = re.compile(
    r"returned a gradient different than None at position (\d+), but the "
    r"corresponding forward input was not a Variable"
)


def check(ctx: Context) -> list:
    out = []
    for mode, err in ctx.errors():
        if mode == Mode.DEFAULT:
            continue  # the framework's own backward: not the user's gradient
        msg = err.message
        for fn in (_count, _per_input, _non_tensor):
            f = fn(ctx, msg, err.where)
            if f is not None:
                out.append(f)
    return out


def _forward_args(ctx: Context) -> list[str]:
    if ctx.result.op is not None and ctx.result.op.args:
        return list(ctx.result.op.args)
    fwd = ctx.forward()
    if fwd is None:
        return []
    skip = 1 if isinstance(ctx.node, source.ast.ClassDef) else 0
    return [p.arg for p in source.params(fwd, skip)]


def _arg(ctx: Context, index0: int) -> str:
    args = _forward_args(ctx)
    return f"'{args[index0]}'" if 0 <= index0 < len(args) else f"number {index0 + 1}"


def _count(ctx: Context, msg: str, err_where: str):
    m = _TORCH_COUNT.search(msg) or _TF_COUNT.search(msg)
    if not m:
        return None
    expected, got = int(m.group(1)), int(m.group(2))
    args = _forward_args(ctx)
    names = f" ({', '.join(args)})" if len(args) == expected else ""
    if len(args) > expected:
        names = (
            f" (arguments left at their default are not inputs: only {expected} of "
            f"{', '.join(args)} were passed)"
        )
    more = (
        "one gradient too many"
        if got == expected + 1
        else ("one gradient too few" if got + 1 == expected else f"{got} gradients")
    )
    message = (
        f"The backward of {ctx.qualname} returns {more} where the forward takes {expected} "
        f"input{'s' if expected != 1 else ''}{names}; {ctx.fw_name()} needs exactly one "
        f"gradient per forward input, in order."
    )
    if ctx.framework == Framework.TF:
        fix = (
            "Return one gradient per positional argument of the decorated function, in order, "
            "including Python-number arguments (return None for those)."
        )
    else:
        fix = (
            "Return exactly one value per forward input, in order, with None for inputs that "
            "need no gradient (such as int or bool arguments)."
        )
    return ctx.finding("GV101-grad-count", "error", message, fix, ctx.backward_where(err_where))


# torch's "invalid gradient at index i" errors: (pattern, code, what the message says, fix).
# Groups: index, then the two values in the order the sentence needs them.
_PER_INPUT = [
    (
        _TORCH_SHAPE,
        "GV102-grad-shape",
        lambda a, got, want: (
            f"The gradient returned for input {a} has shape {_tuple(got)} but the "
            f"input has shape {_tuple(want)}."
        ),
        "Return a gradient of exactly the input's shape (for broadcasting forwards, sum the gradient "
        "over the broadcast dimensions).",
        False,
    ),
    (
        _TORCH_DEVICE,
        "GV104-grad-device",
        lambda a, got, want: (
            f"The gradient returned for input {a} is on {got} but the input is on {want}."
        ),
        "Create gradient tensors on the input's device (e.g. torch.zeros_like(x) or "
        "torch.ones(..., device=x.device)), not on the default device.",
        True,
    ),
    (
        _TORCH_DTYPE,
        "GV103-grad-dtype",
        lambda a, got, want: (
            f"The gradient returned for input {a} has dtype {got} but the input has {want}."
        ),
        "Compute the gradient in the input's dtype (e.g. .to(x.dtype)).",
        True,
    ),
]


def _per_input(ctx: Context, msg: str, err_where: str):
    """Shape, device or dtype of one returned gradient that does not match its input."""
    for pattern, code, say, fix, expected_first in _PER_INPUT:
        m = pattern.search(msg)
        if m:
            i = int(m.group(1))
            got, want = (m.group(3), m.group(2)) if expected_first else (m.group(2), m.group(3))
            return ctx.finding(
                code,
                "error",
                say(_arg(ctx, i), got, want),
                fix,
                ctx.backward_where(err_where),
                tensor=_arg(ctx, i).strip("'"),
            )
    return None


def _non_tensor(ctx: Context, msg: str, err_where: str):
    m = _TORCH_NON_TENSOR.search(msg)
    if not m:
        return None
    pos = int(m.group(1))  # 1-based
    name = _arg(ctx, pos - 1)
    return ctx.finding(
        "GV106-grad-for-non-tensor",
        "error",
        f"The backward returns a gradient for argument {name} (position {pos}), which is not a "
        "tensor, so it cannot have one.",
        f"Return None in position {pos} of backward's return value.",
        ctx.backward_where(err_where),
        tensor=name.strip("'"),
    )


def _tuple(torch_shape: str) -> str:
    dims = [d.strip() for d in torch_shape.split(",") if d.strip()]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
