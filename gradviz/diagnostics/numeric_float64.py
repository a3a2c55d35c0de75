"""The numeric reference evaluates the forward in float64. A forward that makes something in
float32 whatever its inputs are (a constant, a Variable, a cast) raises there, and the reference
is lost: say why and how to write it dtype-agnostic (GV303)."""

from __future__ import annotations

import re

from gradviz.diagnostics.context import Context, first_lines
from gradviz.vocab import ErrorKind, Mode

_DOUBLE = re.compile(r"double|float64", re.IGNORECASE)
_SINGLE = re.compile(r"\bfloat\b|float32", re.IGNORECASE)
_MADE = {
    "tf": "tf.constant(2.0), tf.Variable(2.0), tf.ones([n]) or tf.cast(..., tf.float32)",
    "torch": "torch.tensor([...], dtype=torch.float32), .float() or torch.ones(n)",
    "jax": "jnp.array([...], dtype=jnp.float32), .astype(jnp.float32) or jnp.ones(n, jnp.float32)",
}
_FIX = {
    "tf": "Make them in the input's dtype: tf.constant(2.0, dtype=x.dtype), tf.cast(v, x.dtype), "
    "tf.ones_like(x), or pass them in as arguments.",
    "torch": "Make them in the input's dtype: torch.ones_like(x), x.new_tensor([...]), "
    "torch.tensor(2.0, dtype=x.dtype), or pass them in as arguments.",
    "jax": "Make them in the input's dtype: jnp.ones_like(x), jnp.asarray(v, dtype=x.dtype), "
    "x.astype(x.dtype) rather than a fixed jnp.float32, or pass them in as arguments.",
}


def check(ctx: Context) -> list:
    err = ctx.result.mode_errors.get(Mode.NUMERIC)
    if err is None or err.kind == ErrorKind.CANCELLED:
        return []
    if not (_DOUBLE.search(err.message) and _SINGLE.search(err.message)):
        return []
    fw = ctx.framework if ctx.framework in _MADE else "torch"
    message = (
        f"The numeric reference evaluates the forward in float64, and there it raised "
        f"{err.type}: {first_lines(err.message)[:200]}. The forward makes something in "
        f"float32 whatever its inputs are (such as {_MADE[fw]}), so there is no numeric "
        "reference and custom is compared with default only."
    )
    return [
        ctx.finding(
            "GV303-numeric-float64", "warning", message, _FIX[fw], err.where or ctx.op_where()
        )
    ]
