"""Contract checks: the ways real training calls a backward, beyond one plain call.

One module per check; each has `torch_check(ctx)` and `tf_check(ctx)` returning a CheckResult
(see outcome.py). Worker-only: the frameworks are imported inside the check functions.
`run_checks` runs the requested ones after the plain modes; user code that raises inside a
check becomes a `fail` at the user's file:line, never a crash of the run.
"""
from __future__ import annotations

import importlib

from gradviz.backends.checks.outcome import CheckFailed, raised
from gradviz.backends.user_code import USER_FAILURES, error_info
from gradviz.model import CHECKS, CheckResult


def run_checks(ctx, names) -> tuple[CheckResult, ...]:
    out = []
    for name in (n for n in CHECKS if n in names):
        out.append(run_one(ctx, name))
    return tuple(out)


def run_one(ctx, name: str) -> CheckResult:
    module = importlib.import_module(f"gradviz.backends.checks.{name}")
    check = getattr(module, f"{ctx.framework}_check")
    try:
        result = check(ctx)
    except CheckFailed as exc:
        result = exc.result
    except USER_FAILURES as exc:  # noqa: BLE001 - user code raised in a way the check did not expect
        err = error_info(exc, "error", ctx.backward_where())
        result = raised(name, err, f"the {name.replace('_', ' ')} check")
    return result


def skipped_all(names, reason: str) -> tuple[CheckResult, ...]:
    """Every requested check skipped for one reason (the op itself failed to run)."""
    return tuple(CheckResult(n, "skip", reason) for n in CHECKS if n in names)
