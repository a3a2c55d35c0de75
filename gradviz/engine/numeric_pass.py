"""The app's second pass: the numeric reference added to the quick pass's result.

In the window's QUICK -> NUMERIC passes (engine.passes) each op runs first without the numeric
mode (shown at once), then again for the numeric reference. The worker keeps what the quick pass made
(backends.kept) and answers the second pass with the numeric mode only; here that part joins
the quick result, so the custom and default gradients are neither computed, sent nor copied a
second time: the full result holds the very arrays of the partial one (the app's analysis
reuses what it worked out from them). A numeric pass cancelled, or one that fails as a whole
(timeout, crash, memory kill), leaves the quick result with the numeric mode's error.
"""

from __future__ import annotations

from dataclasses import replace

from gradviz.model import ErrorInfo, RunRequest, RunResult
from gradviz.vocab import ErrorKind, Mode


def with_numeric(quick: RunResult, numeric: RunResult, req: RunRequest) -> RunResult:
    """The full result of `req`: `quick` (its quick pass, status ok) plus `numeric` (only the
    numeric mode of each tensor, its error, log, warnings and time)."""
    parts = {t.name: t for t in numeric.tensors}
    tensors = []
    for t in quick.tensors:
        n = parts.get(t.name)
        if n is None:
            tensors.append(t)
            continue
        tensors.append(
            replace(
                t, grads={**t.grads, **n.grads}, absent={**t.absent, **n.absent}, numeric=n.numeric
            )
        )
    warnings = quick.warnings + tuple(w for w in numeric.warnings if w not in quick.warnings)
    return replace(
        quick,
        request=req,
        tensors=tuple(tensors),
        partial=False,
        mode_errors={**quick.mode_errors, **numeric.mode_errors},
        log=quick.log + numeric.log,
        warnings=warnings,
        elapsed=quick.elapsed + numeric.elapsed,
    )


def numeric_cancelled(quick: RunResult, req: RunRequest, skipped: bool) -> RunResult:
    """The result of `req` whose numeric pass was cancelled (Cancel all) or skipped (Skip this
    op) after its quick pass gave `quick`: custom and default as they came, the numeric mode
    missing with why (its mode error, kind "cancelled"). The window showed them already; a
    cancel must not take them away."""
    why = "skipped by the user" if skipped else "cancelled"
    err = ErrorInfo(
        "Cancelled", f"the numeric pass was {why} before it finished", kind=ErrorKind.CANCELLED
    )
    return replace(
        quick, request=req, partial=False, mode_errors={**quick.mode_errors, Mode.NUMERIC: err}
    )


def numeric_failed(quick: RunResult, failed: RunResult, req: RunRequest) -> RunResult:
    """The result of `req` whose numeric pass failed as a whole after its quick pass gave
    `quick`: `failed` is the engine's answer for that call (a timeout, a crash of the worker,
    a memory kill: status error, no tensors). Custom and default as they came, the numeric
    mode's error that call's error (RunResult.numeric_failed). The window showed them already;
    a failure in the numeric pass takes only numeric away, and says so."""
    return replace(
        quick,
        request=req,
        partial=False,
        mode_errors={**quick.mode_errors, Mode.NUMERIC: failed.error},
        elapsed=quick.elapsed + failed.elapsed,
    )
