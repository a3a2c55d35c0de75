"""A JAX rule's error at the rule's own line. JAX checks what a rule returned after it returned
(bwd's cotangent count, a tangent rule's pair, a transposition), so its error has no frame of the
user's and fell back to the op's def line; the JAX trap finding reads the rule off the source and
names the line to fix, and the error now names that line too. Worker-only."""

from __future__ import annotations

from dataclasses import replace

from gradviz.diagnostics import jax_traps
from gradviz.diagnostics.context import Context
from gradviz.model import RunResult


def at_rule_line(result: RunResult) -> RunResult:
    """`result` with its error (and every mode's error of the same words) at the line the JAX
    finding names, where the error has no user frame; unchanged otherwise."""
    err = result.error
    if result.framework != "jax" or err is None or err.traceback:
        return result
    try:
        where = jax_traps.rule_line(Context(result), err)
    except Exception:  # noqa: BLE001 - a source that cannot be read keeps the op's line
        return result
    if not where or where == err.where:
        return result

    def moved(e):
        same = (e.type, e.message) == (err.type, err.message) and not e.traceback
        return replace(e, where=where) if same else e

    return replace(
        result,
        error=moved(err),
        mode_errors={m: moved(e) for m, e in result.mode_errors.items()},
    )
