"""The second opinion of a check that compares two float32 evaluations of the op's gradient
(compiled, vmap, noncontiguous_upstream). Where the op's own arithmetic loses bits, two
evaluations that order or simplify it differently differ by that rounding, beyond any fixed
float32 tolerance: ((x + 1e5) - 1e5) * 2 rounds x to float32's spacing at 1e5 (2**-7 = 0.0078),
and tf.function's optimiser, which folds (x + c) - c, does not. The same comparison in float64
tells that rounding from a fault, as the precision check does for custom against numeric: a
difference that float64 does not show is float32 rounding (a pass that says so, with the float32
numbers); one that stays is the check's finding, held there to float64's tighter tolerance, so
a backward that is really wrong under the compiler or vmap still fails."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from gradviz.model import CheckResult
from gradviz.vocab import CheckStatus

NOT_ROUNDING = "not float32 rounding"


def unless_rounding(ctx, run: Callable[[str], CheckResult]) -> CheckResult:
    """run(dtype) -> the check's result at that dtype. The run's dtype first; a float32
    "differs" is run again in float64 where the forward has a float64 witness."""
    result = run(ctx.settings.dtype)
    if (
        result.status != CheckStatus.FAIL
        or result.kind != "differs"
        or ctx.settings.dtype != "float32"
        or ctx.float64_unfit
    ):
        return result
    try:
        again = run("float64")
    except Exception:  # noqa: BLE001 - no float64 witness (the op refuses float64): it stands
        return result
    if again.status == CheckStatus.PASS:
        return CheckResult(
            result.name,
            "pass",
            f"in float64 {again.message}; in float32 "
            f"{result.message}, a difference float64 does not show: float32 "
            "rounding of the op's own arithmetic, not a fault (the precision "
            "check measures that rounding against numeric)",
        )
    if again.status == CheckStatus.FAIL and again.kind == "differs":
        return replace(
            result,
            message=f"{result.message}; in float64 too: "
            f"{_detail(result.message, again.message)}, so it is {NOT_ROUNDING}",
        )
    return result


def _detail(first: str, again: str) -> str:
    """The float64 failure's numbers, without the words it shares with the float32 one."""
    head, _, detail = again.rpartition(": ")
    return detail if head and first.startswith(head + ": ") else again
