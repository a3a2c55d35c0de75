"""Verdicts per tensor and per-op comparisons (numpy only).

The numbers (tolerances, statistics, pair metrics) live in compare/metrics.py, each mode against
numeric in numeric_metrics.py; judge.py decides what they mean (custom against the truth,
DESIGN.md "Verdicts"); this module puts them together per tensor and per op. Besides match,
surrogate, differs, non-finite, broken and error, two say nothing was compared: no-gradient (an
int64 / bool input, a frozen parameter) and unchecked (nothing independent checks custom).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from gradviz.compare.judge import independent_of_output, judge
from gradviz.compare.metrics import Tol, mode_stats, tolerances
from gradviz.compare.numbers import ModeStats, PairMetrics
from gradviz.compare.numeric_metrics import KINK_FRACTION, PROBE, numeric_defined, tensor_metrics
from gradviz.model import MODES, ErrorInfo, RunResult, TensorResult, fixed_dtype
from gradviz.verdict import NAMES, Verdict
from gradviz.verdict import PASSING as PASSING_VERDICTS
from gradviz.vocab import ErrorKind, Framework, Mode

# the names the checks and diagnostics take from here
__all__ = [
    "VERDICTS",
    "TensorComparison",
    "OpComparison",
    "verdict",
    "compare_tensor",
    "compare_result",
    "custom_not_found",
    "summary_counts",
    "shown_verdict",
    "failed_text",
    "PASSING",
    "KINK_FRACTION",
    "PROBE",
    "numeric_defined",
    "tensor_metrics",
    "independent_of_output",
]

# Least severe first (gradviz/verdict.py holds the order and what each verdict carries)
VERDICTS = NAMES


@dataclass(frozen=True)
class TensorComparison:
    name: str
    role: str
    shape: tuple
    dtype: str
    verdict: str
    explanation: str
    stats: dict[str, ModeStats]  # mode -> its gradient's statistics
    # "custom~default" | "custom~numeric" | "default~numeric" | PROBE -> how close the pair is
    metrics: dict[str, PairMetrics]
    tolerance: Tol  # custom vs default
    numeric_tolerance: Tol  # either vs numeric
    numeric_method: str | None = None  # "full" | "projection" | None
    # the numeric pass was cancelled after custom and default came back (RunResult.numeric_cancelled):
    # the verdict rests on them alone, and a passing one is shown "..., numeric cancelled"
    numeric_cancelled: bool = False
    # the numeric mode failed (it raised; in the app, its pass timed out or crashed the worker:
    # RunResult.numeric_failed): the same, and a passing verdict is shown "..., numeric failed"
    numeric_failed: bool = False

    @property
    def numeric_missing(self) -> bool:
        """Its numeric pass was cancelled or failed after custom and default came back: a
        passing verdict rests on custom vs default alone."""
        return self.numeric_cancelled or self.numeric_failed


@dataclass(frozen=True)
class OpComparison:
    name: str
    framework: str
    device: str
    status: str
    error: ErrorInfo | None
    tensors: tuple[TensorComparison, ...]  # in the result's order


def verdict(
    tensor: TensorResult,
    op_status: str = "ok",
    mode_errors: dict | None = None,
    error: ErrorInfo | None = None,
    inplace: tuple = (),
) -> tuple[str, str]:
    """(verdict, one-sentence explanation with numbers) for one tensor."""
    return judge(tensor, op_status, mode_errors or {}, error, tensor_metrics(tensor), inplace)


# --- per op ----------------------------------------------------------------------------------
def _stats(t: TensorResult, mode_errors: dict, known: dict | None = None) -> dict[str, ModeStats]:
    out: dict[str, ModeStats] = {}
    if fixed_dtype(t.dtype):
        return out  # no mode differentiates an int64 / bool input
    for mode in MODES:
        if known and mode in known:
            out[mode] = known[mode]
        elif mode in t.grads:
            out[mode] = mode_stats(t.grads[mode])
        elif mode == Mode.NUMERIC and t.numeric is not None and t.numeric.method == "projection":
            # before "absent": it has a reference, only not per element (the Numbers' min said
            # "absent" for it)
            out[mode] = ModeStats.projection(t.numeric.directions)
        elif mode in t.absent:
            out[mode] = mode_stats(None, t.absent[mode])
        elif (
            mode in mode_errors and mode_errors[mode].kind == ErrorKind.CANCELLED
        ):  # not run to its end
            out[mode] = ModeStats.missing(mode_errors[mode].message, cancelled=True)
        elif mode in mode_errors:  # no gradient because the mode raised: an error, not absent
            out[mode] = ModeStats.missing(failed_text(mode_errors[mode]), raised=True)
    return out


def compare_tensor(
    t: TensorResult,
    op_status: str = "ok",
    mode_errors: dict | None = None,
    error: ErrorInfo | None = None,
    inplace: tuple = (),
    earlier: tuple | None = None,
) -> TensorComparison:
    """`earlier`: (TensorResult, TensorComparison) of an earlier result of the same tensor;
    what it worked out from the very same gradient arrays is taken, not computed again."""
    mode_errors = mode_errors or {}
    known_stats, known_metrics = _known(t, earlier)
    metrics = tensor_metrics(t, known_metrics)
    v, why = judge(t, op_status, mode_errors, error, metrics, inplace)
    v = Verdict(v)
    num_err = mode_errors.get(Mode.NUMERIC) if not fixed_dtype(t.dtype) else None
    cancelled = num_err is not None and num_err.kind == ErrorKind.CANCELLED
    failed = num_err is not None and not cancelled
    if num_err is not None and cancelled:
        why += f" ({num_err.message}: custom is not checked against numeric)"
    elif num_err is not None:  # failed
        why += f" (numeric {failed_text(num_err)}: custom is not checked against numeric)"
    method = None
    if t.grads.get(Mode.NUMERIC) is not None:
        method = "full"
    elif t.numeric is not None and t.numeric.method == "projection":
        method = "projection"
    return TensorComparison(
        t.name,
        t.role,
        tuple(t.shape),
        t.dtype,
        v,
        why,
        _stats(t, mode_errors, known_stats),
        metrics,
        tolerances(t.dtype),
        tolerances(t.dtype, numeric=True),
        method,
        cancelled,
        failed,
    )


def failed_text(err: ErrorInfo) -> str:
    """How a mode failed, in words: "raised ValueError at ops.py:9: ..." for the user's
    exception; "failed: Timeout at ops.py:9: the numeric pass did not finish ..." for a call
    the worker never answered (a timeout, a crash, a memory kill: nothing was raised)."""
    return f"{'raised' if err.kind == ErrorKind.ERROR else 'failed:'} {err.one_line()}"


# Verdicts that say the custom gradient passed: DESIGN.md's match needs custom to agree with
# numeric too, and surrogate is told from differs by numeric where default gives nothing
PASSING = tuple(v.value for v in PASSING_VERDICTS)
NUMERIC_CANCELLED = "numeric cancelled"
NUMERIC_FAILED = "numeric failed"


def shown_verdict(tc: TensorComparison) -> str:
    """The verdict as the window and its exports label it: a passing one whose numeric pass was
    cancelled reads "match, numeric cancelled", one whose numeric mode failed "match, numeric
    failed" (no verdict colour: it was not checked); a worse verdict stays as it is."""
    if tc.verdict in PASSING:
        if tc.numeric_cancelled:
            return f"{tc.verdict}, {NUMERIC_CANCELLED}"
        if tc.numeric_failed:
            return f"{tc.verdict}, {NUMERIC_FAILED}"
    return tc.verdict


def _known(t: TensorResult, earlier: tuple | None) -> tuple[dict, dict]:
    """(stats by mode, metrics) of `earlier` that hold for `t`: those of its custom and default
    gradients where `t` has the very same array objects (the app's final result of an op holds
    its partial result's arrays: engine.numeric_pass). Equal-looking copies do not count."""
    if earlier is None:
        return {}, {}
    old_t, old_c = earlier
    if old_t.name != t.name or old_t.dtype != t.dtype:
        return {}, {}
    same = {
        m
        for m in (Mode.CUSTOM, Mode.DEFAULT)
        if t.grads.get(m) is not None and t.grads.get(m) is old_t.grads.get(m)
    }
    stats = {m: old_c.stats[m] for m in same if m in old_c.stats}
    metrics = {
        k: old_c.metrics[k]
        for k in ("custom~default",)
        if same == {Mode.CUSTOM, Mode.DEFAULT} and k in old_c.metrics
    }
    return stats, metrics


def compare_result(result: RunResult, earlier: tuple | None = None) -> OpComparison:
    """`earlier`: (RunResult, OpComparison) of an earlier result of the same op (the app's
    partial one): the numbers of gradient arrays the two share are taken from it."""
    olds: dict = {}
    if earlier is not None and earlier[1] is not None:
        olds = {ot.name: (ot, oc) for ot, oc in zip(earlier[0].tensors, earlier[1].tensors)}
    tensors = tuple(
        custom_not_found(
            result,
            t,
            compare_tensor(
                t,
                result.status,
                result.mode_errors,
                result.error,
                tuple(result.inplace_inputs),
                olds.get(t.name),
            ),
        )
        for t in result.tensors
    )
    return OpComparison(
        result.name, result.framework, result.device, result.status, result.error, tensors
    )


def custom_not_found(result: RunResult, t: TensorResult, tc: TensorComparison) -> TensorComparison:
    """The seed tutorial's trap: a Module / Layer whose backward-shaped method nothing called
    (RunResult.uncalled_backward) and no custom gradient of its own ran (no_own_gradient): custom
    is the framework's own autodiff, so whatever it agrees with, the custom gradient was not
    found (`broken`). Tensors the op's backward does not produce (its outputs, frozen
    parameters) keep theirs, as does one where custom differs from default after all (something
    of the user's did run)."""
    overruled = ("match", "surrogate", "differs", "unchecked")  # nothing worse was found
    if (
        not (result.no_own_gradient and result.uncalled_backward)
        or t.role == "output"
        or t.frozen
        or tc.verdict not in overruled
    ):
        return tc
    m = tc.metrics.get("custom~default")
    if m is not None and not m.allclose:
        return tc
    caller = (
        "Keras differentiates call"
        if result.framework == Framework.TF
        else "autograd differentiates forward"
    )
    why = (
        f"custom gradient not found: {result.uncalled_backward[0]} is never called ({caller} "
        "itself and never calls such a method), and nothing the op runs overrides the "
        "gradient, so custom is the framework's own autodiff; it would read: "
        f"{tc.verdict}, {tc.explanation}"
    )
    return replace(tc, verdict="broken", explanation=why)


def summary_counts(comparisons: Iterable[OpComparison]) -> dict:
    """verdict -> number of tensors, every verdict listed. An op that failed before producing any
    tensor counts once as "error", so that failures never vanish from a summary."""
    counts = Counter({v: 0 for v in VERDICTS})
    for comp in comparisons:
        if not comp.tensors and comp.status == "error":
            counts["error"] += 1
        for t in comp.tensors:
            counts[t.verdict] += 1
    return dict(counts)
