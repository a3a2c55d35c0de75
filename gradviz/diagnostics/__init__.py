"""Diagnostics: custom-gradient mistakes explained in plain words, at the user's file:line.

API (numpy + ast only: no torch / tensorflow import; the user's file is parsed, never imported):

    from gradviz.diagnostics import diagnose, diagnose_load, Finding, CODES

    diagnose(result: RunResult, comparison: OpComparison | None = None) -> list[Finding]
        Every check over one op run (pass compare_result(result) if you have it; it is computed
        on demand otherwise). Findings are sorted error, warning, info.
    diagnose_load(error: ErrorInfo, path: str = "", framework: str = "") -> list[Finding]
        For a file that failed to load (FileCatalog.error), e.g. Keras `self.weights = ...`.

    Finding (frozen): code ("GV102-grad-shape", stable, see CODES), severity ("error" | "warning"
    | "info"), title, message (one sentence), fix (one sentence), where ("file:line" or ""),
    framework, op, tensor. `as_dict()` for JSON, `one_line()` for a terminal.

Codes: GV1xx gradients or inputs that do not fit (count, shape, dtype, device, missing, for
non-tensors, inputs of a shape or range the op cannot take, an upstream gradient never read, a
gradient rounded to bfloat16 / float16), GV2xx forward changed, GV3xx custom vs numeric (bug or
surrogate; no float64 reference; an upstream that hides the backward; the cause read off the
numbers: sign flipped, transposed, another input's, summed over the wrong axes; a surrogate
against its step), GV4xx
NaN/Inf, GV5xx no default path, GV6xx tutorial traps (Keras weights, variables=, call
returning a grad fn, save_for_backward, in-place without mark_dirty, a Module / Layer
backward() that nothing calls; JAX's: a custom_vjp's residuals, a custom_jvp's non-linear
tangent rule, an array in nondiff_argnums, a tangent rule returning no pair), GV7xx failed
contract checks (double backward, non-contiguous upstream, autocast, vmap, compiled, precision).
GV000: a check itself failed (a gradviz bug).
"""

from __future__ import annotations

from gradviz.diagnostics import (
    causes,
    contract_checks,
    default_path,
    forward_changed,
    from_errors,
    gradients,
    input_shapes,
    jax_traps,
    keras_traps,
    nonfinite,
    numeric_float64,
    source,
    surrogate_direction,
    torch_traps,
    uncalled_backward,
    upstream_blind,
    upstream_unused,
    versus_numeric,
)
from gradviz.diagnostics.context import Context
from gradviz.diagnostics.finding import CODES, SEVERITIES, SEVERITY_ORDER, Finding
from gradviz.model import ErrorInfo, RunResult

__all__ = ["diagnose", "diagnose_load", "with_check_findings", "Finding", "CODES", "SEVERITIES"]

CHECKS = (
    from_errors.check,
    input_shapes.check,
    upstream_unused.check,
    gradients.check,
    forward_changed.check,
    causes.check,
    surrogate_direction.check,
    versus_numeric.check,
    numeric_float64.check,
    upstream_blind.check,
    nonfinite.check,
    default_path.check,
    keras_traps.check,
    torch_traps.check,
    jax_traps.check,
    uncalled_backward.check,
    contract_checks.check,
)


def diagnose(result: RunResult, comparison=None) -> list[Finding]:
    return _sorted_unique(_run(CHECKS, result, comparison))


def with_check_findings(findings, result: RunResult, comparison=None) -> list[Finding]:
    """`findings` (diagnose's of a result before its contract checks came back) and those of
    its checks, now in `result`: what diagnose(result) finds, without running the rest again
    (no other check reads the contract checks)."""
    return _sorted_unique([*findings, *_run((contract_checks.check,), result, comparison)])


def _run(checks, result: RunResult, comparison) -> list[Finding]:
    if comparison is None:  # worked out here, as the API says: findings follow the verdicts
        from gradviz.compare import compare_result

        comparison = compare_result(result)
    ctx = Context(result, comparison)
    found: list[Finding] = []
    for check in checks:
        try:
            found += check(ctx)
        except Exception as exc:  # noqa: BLE001 - a gradviz bug must not hide the other findings
            found.append(
                ctx.finding(
                    "GV000-diagnostic-failed",
                    "info",
                    f"The {check.__module__.rsplit('.', 1)[-1]} check failed: "
                    f"{type(exc).__name__}: {exc}.",
                    "Report this as a gradviz bug.",
                    "",
                )
            )
    return found


def diagnose_load(error: ErrorInfo, path: str = "", framework: str = "") -> list[Finding]:
    """Findings for a file that failed to load (or an op that failed to construct)."""
    path = path or error.where.rsplit(":", 1)[0]
    tree = source.parse(path) if path else None
    return _sorted_unique(keras_traps.weights_assignment(path, tree, error, None, framework))


def _sorted_unique(found: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in found:
        key = (f.code, f.where, f.tensor, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return sorted(out, key=lambda f: SEVERITY_ORDER.get(f.severity, 9))
