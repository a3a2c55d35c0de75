"""An op that needs inputs of another shape than gradviz gave it (GV107): a conv on a flat
vector, a matmul on 1-D tensors. The framework's shape error is right but does not say that the
inputs were gradviz's choice, nor how to choose others."""

from __future__ import annotations

import re

from gradviz.diagnostics import jax_traps, jax_words
from gradviz.diagnostics.context import Context, first_lines

# the frameworks' words for "this tensor has the wrong rank or size" (torch, TensorFlow, JAX)
_SHAPE_ERROR = re.compile(
    r"Expected \d+D|to be at least \d+D|need to be at least \d+D|shapes cannot be multiplied|"
    r"size mismatch|must match the size of tensor|cannot be broadcast|not aligned|"
    r"Incompatible shapes|Dimensions must be equal|must be at least rank|must be rank|"
    r"Shape must be rank|ndims|Matrix size-incompatible|In\[0\] and In\[1\]|"
    r"could not be broadcast together|dot_general requires contracting dimensions",
    re.IGNORECASE,
)


# an index the op looked up was out of its table (torch's Embedding / gather, TF's gather)
_INDEX_ERROR = re.compile(
    r"index out of range|index \d+ is out of bounds|indices\[[^\]]*\] = "
    r"-?\d+ is not in \[",
    re.IGNORECASE,
)


def check(ctx: Context) -> list:
    return _shapes(ctx) or _int_ranges(ctx)


def _int_ranges(ctx: Context) -> list:
    """GV109: an index out of the op's table. Integer inputs are drawn from their range with both
    ends included (DESIGN.md), so range (0, 10) for a table of 10 rows gives index 10 too."""
    found = ctx.error_matching(_INDEX_ERROR)
    if found is None or jax_traps.explains(ctx, found[1]):
        return []  # a JAX bwd indexing its residuals (GV608): no table, no integer input
    err = found[1]
    message = (
        f"The op raised an index error ({err.type}: {first_lines(err.message)[:160]}). "
        "If an integer input indexes a table, note that gradviz draws integer inputs "
        "from their range with both ends included: range (0, 10) gives the index 10 "
        "as well."
    )
    fix = (
        "Give the integer input a range that ends at the last valid index: "
        '@gradviz.op(inputs={"ids": {"shape": (8,), "dtype": "int64", '
        '"range": (0, 9)}}) for a table of 10 rows.'
    )
    return [ctx.finding("GV109-input-range", "error", message, fix, err.where or ctx.op_where())]


def _shapes(ctx: Context) -> list:
    found = ctx.error_matching(_SHAPE_ERROR)
    if found is None:
        return []
    mode, err = found
    shape = tuple(ctx.result.request.settings.shape)
    given = "x".join(str(n) for n in shape)
    where = "" if mode == "run" else f" in the {mode} mode"
    message = (
        f"The op raised a shape error{where} ({err.type}: {first_lines(err.message)[:160]}) "
        f"on the inputs gradviz made for it: shape {shape} from the shape setting, "
        "unless @gradviz.op(inputs=...) gives its own. If the op needs inputs of other "
        "shapes (a conv, a matmul), that is a setting to change, not a bug in the op."
    )
    fix = jax_words.say(
        ctx,
        "input_shape",
        f'Give the op inputs of the shapes it expects: @gradviz.op(inputs={{"x": (1, 3, 8, 8)}}) '
        f"on the op, or the shape setting (--shape 4x50 instead of {given}).",
        given=given,
    )
    return [ctx.finding("GV107-input-shape", "error", message, fix, err.where or ctx.op_where())]
