"""Verdicts per tensor and per-op comparisons (numpy only).

The numbers (tolerances, statistics, pair metrics) live in compare/metrics.py; this module decides
what they mean. Verdicts (DESIGN.md): match, surrogate, differs, non-finite, broken, error, and
two that say nothing was compared: no-gradient for int64 / bool inputs, which are not
differentiated, and unchecked for a gradient with nothing to check it against (one mode of custom
and default, no numeric reference): calling that `match` would vouch for a gradient no one checked.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Iterable, Optional

import numpy as np

from gradviz.compare.metrics import Tol, close_mask, fmt, mode_stats, pair_metrics, tolerances
from gradviz.model import FIXED_DTYPES, MODES, OVERRIDE_KEPT, ErrorInfo, RunResult, TensorResult

# Least severe first: the app's marks take the worst as the last of these (app/state.py).
# no-gradient (an int64 / bool input) says nothing about the op, so it never hides another;
# unchecked outranks the passing verdicts: an op with one unchecked tensor has not passed.
VERDICTS = ("no-gradient", "match", "surrogate", "unchecked", "differs", "non-finite", "broken",
            "error")


@dataclass(frozen=True)
class TensorComparison:
    name: str
    role: str
    shape: tuple
    dtype: str
    verdict: str
    explanation: str
    stats: dict                 # mode -> mode_stats(...)
    metrics: dict               # "custom~default" | "custom~numeric" | "default~numeric" -> pair_metrics
    tolerance: Tol              # custom vs default
    numeric_tolerance: Tol      # either vs numeric
    numeric_method: Optional[str] = None   # "full" | "projection" | None
    # the numeric pass was cancelled after custom and default came back (RunResult.numeric_cancelled):
    # the verdict rests on them alone, and a passing one is shown as unchecked (shown_verdict)
    numeric_cancelled: bool = False
    # the numeric mode failed (it raised; in the app, its pass timed out or crashed the worker:
    # RunResult.numeric_failed): the same, and a passing verdict is shown "..., numeric failed"
    numeric_failed: bool = False

    @property
    def numeric_unchecked(self) -> bool:
        """Its numeric pass was cancelled or failed after custom and default came back: a
        passing verdict rests on custom vs default alone."""
        return self.numeric_cancelled or self.numeric_failed


@dataclass(frozen=True)
class OpComparison:
    name: str
    framework: str
    device: str
    status: str
    error: Optional[ErrorInfo]
    tensors: tuple              # of TensorComparison, in the result's order


# --- metrics of one tensor -------------------------------------------------------------------
def _vs_numeric(t: TensorResult, mode: str) -> Optional[dict]:
    g = t.grads.get(mode)
    if g is None:
        return None
    tol = tolerances(t.dtype, numeric=True)
    if t.grads.get("numeric") is not None:
        return _against_numeric(g, t.grads["numeric"], tol, "full")
    p = t.numeric.projections if t.numeric is not None else {}
    if t.numeric is not None and t.numeric.method == "projection" and mode in p and "numeric" in p:
        return _against_numeric(p[mode], p["numeric"], tol, "projection")
    return None


def numeric_defined(g, n) -> np.ndarray:
    """Per element (flat): can numeric judge `g` there? Not where the finite difference is
    NaN/Inf and `g` is finite: the loss is not finite at or next to that point (a NaN forward
    output, a log's or sqrt's domain edge straddled), so there is no reference there, not a
    reference that the gradient misses. NaN in both still counts as agreeing (close_mask)."""
    g = np.asarray(g, dtype=np.float64).reshape(-1)
    n = np.asarray(n, dtype=np.float64).reshape(-1)
    return np.isfinite(n) | ~np.isfinite(g)


def _against_numeric(g, n, tol: Tol, method: str) -> dict:
    """pair_metrics of `g` against numeric over the elements numeric is defined at; the others
    are counted as "numeric_undefined" ("n" is what was compared: 0 when nothing was)."""
    n_flat = np.asarray(n, dtype=np.float64).reshape(-1)
    if np.size(g) != n_flat.size or np.isfinite(n_flat).all():
        return {**pair_metrics(g, n, tol), "method": method}
    keep = numeric_defined(g, n_flat)
    k = int(keep.size - np.count_nonzero(keep))
    if k == 0:
        return {**pair_metrics(g, n, tol), "method": method}
    if k == keep.size:
        return {"n": 0, "n_differ": 0, "allclose": True, "max_abs_err": None, "max_rel_err": None,
                "cosine": None, "norm_ratio": None, "worst_index": None, "atol": None,
                "rtol": tol.rtol, "method": method, "numeric_undefined": k}
    m = pair_metrics(np.asarray(g, dtype=np.float64).reshape(-1)[keep], n_flat[keep], tol)
    if m["worst_index"] is not None:
        m["worst_index"] = int(np.flatnonzero(keep)[m["worst_index"]])
    return {**m, "method": method, "numeric_undefined": k}


def tensor_metrics(t: TensorResult, known: Optional[dict] = None) -> dict:
    """Pair metrics between the modes present; the second name is the reference. `known`:
    metrics already worked out from these very arrays (see _known)."""
    out = {}
    c, d = t.grads.get("custom"), t.grads.get("default")
    if known and "custom~default" in known:
        out["custom~default"] = known["custom~default"]
    elif c is not None and d is not None:
        out["custom~default"] = pair_metrics(c, d, tolerances(t.dtype))
    for mode in ("custom", "default"):
        m = _vs_numeric(t, mode)
        if m is not None:
            out[f"{mode}~numeric"] = m
    if t.probe is not None:
        out[PROBE] = t.probe
    return out


# custom vs default under a second, random upstream (TensorResult.probe)
PROBE = "custom~default, random upstream"


# --- verdict ---------------------------------------------------------------------------------
def _ran(t: TensorResult, mode: str) -> bool:
    """The mode ran and gave a gradient or none. A default whose override gradviz could not
    remove did not run as the framework's autodiff: it is left out of the verdict."""
    return mode in t.grads or (mode in t.absent and not _override_kept(t, mode))


def _override_kept(t: TensorResult, mode: str) -> bool:
    return t.absent.get(mode, "").startswith(OVERRIDE_KEPT)


# Elements where custom and default agree but numeric does not, tolerated in a `match` (the
# finite difference straddled a kink: relu at 0, a clamp's edge). Any more is a wrong gradient
# that both modes share (DESIGN.md: a match requires custom to agree with numeric too).
KINK_FRACTION = 0.01


def _independent(t: TensorResult) -> bool:
    """An input the output does not depend on: numeric exactly zero (every element, or every
    random direction) and no gradient from the modes that ran."""
    if t.role not in ("input", "param") or "custom" not in t.absent:
        return False
    n = t.grads.get("numeric")
    if n is not None:
        return bool(np.all(np.asarray(n) == 0))
    p = t.numeric.projections.get("numeric") if t.numeric is not None else None
    return p is not None and bool(np.all(np.asarray(p) == 0))


def independent_of_output(t: TensorResult) -> bool:
    """For diagnostics: no gradient anywhere because none is due (DESIGN.md: a `match`)."""
    return "custom" not in t.grads and "default" not in t.grads and _independent(t)


def _agrees_with_numeric(metrics: dict) -> bool:
    m = metrics.get("custom~numeric")
    if m is None or m["allclose"]:
        return True
    if m.get("method") != "full" or m.get("shape_mismatch"):
        return False
    return m["n_differ"] <= max(1, int(KINK_FRACTION * m["n"]))


def _why(t: TensorResult, mode: str) -> str:
    return t.absent.get(mode) or "no gradient"


def _err_text(m: dict) -> str:
    return f"max abs error {fmt(m['max_abs_err'])} (tolerance {fmt(m['atol'])} abs + {m['rtol']:g} rel)"


def _numeric_clause(metrics: dict, mode: str) -> str:
    m = metrics.get(f"{mode}~numeric")
    if m is None:
        return f"no numeric reference to check {mode} against"
    unit = "random directions" if m["method"] == "projection" else "elements"
    if m.get("shape_mismatch"):
        return f"{mode} and numeric differ in shape ({m['shape_mismatch']}): not compared"
    k = m.get("numeric_undefined", 0)
    if m["n"] == 0:
        at = "along" if m["method"] == "projection" else "at"
        return (f"no usable numeric reference to check {mode} against: numeric is NaN/Inf {at} "
                f"all {k} {unit} where {mode} is finite (the loss is not finite at or next to "
                "these inputs)")
    where = f" where numeric is finite (it is NaN/Inf at the other {k}, next to inputs where " \
            "the loss is not finite)" if k else ""
    if m["allclose"]:
        return f"{mode} agrees with numeric on all {m['n']} {unit}{where}, {_err_text(m)}"
    return f"{mode} differs from numeric at {m['n_differ']} of {m['n']} {unit}{where}, {_err_text(m)}"


def _checked_by_numeric(m: Optional[dict]) -> bool:
    return m is not None and m["n"] > 0


def _nonfinite_text(t: TensorResult, mode: str, g: np.ndarray) -> str:
    g = np.asarray(g, dtype=np.float64).reshape(-1)
    bad = ~np.isfinite(g)
    counts = f"{int(np.isnan(g).sum())} NaN and {int(np.isinf(g).sum())} Inf"
    text = f"{mode} gradient of {t.name} has {counts} of {g.size} elements"
    if mode != "custom":
        return text
    d = t.grads.get("default")
    if d is None:
        return text + ("; default gives no gradient" if _ran(t, "default") else "")
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    if d.size != g.size:
        return text
    same = int((~np.isfinite(d[bad])).sum())
    if same == bad.sum() and (~np.isfinite(d)).sum() == same:
        return text + "; default has NaN/Inf at the same places"
    if same == 0:
        return text + "; default is finite there"
    return text + f"; default has NaN/Inf at {same} of those places"


def _flat64(g) -> np.ndarray:
    return np.asarray(g, dtype=np.float64).reshape(-1)


def _custom_vs_default(t: TensorResult, metrics: dict) -> tuple[str, str]:
    """Both present, custom finite."""
    m = metrics["custom~default"]
    num = _numeric_clause(metrics, "custom")
    if m.get("shape_mismatch"):
        return "differs", f"custom and default gradients of {t.name} differ in shape ({m['shape_mismatch']}); {num}"
    tol = tolerances(t.dtype)
    # float64 copies only where elements are picked out: a match needs none (10^6-element
    # gradients are judged on the window's threads)
    undefined = ~np.isfinite(np.asarray(t.grads["default"]).reshape(-1))
    if undefined.any():
        c, d = _flat64(t.grads["custom"]), _flat64(t.grads["default"])
        k = int(undefined.sum())
        sub = pair_metrics(c[~undefined], d[~undefined], tol)
        if sub["allclose"]:
            return "surrogate", (f"default is NaN/Inf at {k} of {c.size} elements where custom is "
                                 f"finite, and they agree elsewhere; {num}")
        return "differs", (f"default is NaN/Inf at {k} of {c.size} elements, and elsewhere custom "
                           f"differs from default at {sub['n_differ']} of {sub['n']}, "
                           f"{_err_text(sub)}; {num}")
    if m["allclose"]:
        if not _agrees_with_numeric(metrics):
            return "differs", (f"custom and default agree with each other at all {m['n']} "
                               f"elements but both differ from numeric: {num}; the default "
                               "column repeats the same gradient, so it proves nothing")
        p = metrics.get(PROBE)
        if p is not None and not p["allclose"]:
            return "differs", (f"custom matches default at all {m['n']} elements under this "
                               f"run's upstream, but under a random one they differ at "
                               f"{p['n_differ']} of {p['n']} elements, {_err_text(p)}: the "
                               "backward does not use its incoming gradient as the chain rule "
                               "does (a correct one is linear in it); " + num)
        return "match", f"custom matches default at all {m['n']} elements, {_err_text(m)}; {num}"
    c, d = _flat64(t.grads["custom"]), _flat64(t.grads["default"])
    differing = ~close_mask(c, d, tol)
    where = f"custom differs from default at {m['n_differ']} of {m['n']} elements"
    if np.all(d[differing] == 0):
        return "surrogate", f"{where}, all where default is 0 (straight-through style), {_err_text(m)}; {num}"
    return "differs", f"{where}, {_err_text(m)}; {num}"


def _one_mode_vs_numeric(t: TensorResult, mode: str, metrics: dict,
                         mode_errors: dict) -> tuple[str, str]:
    """Only `mode` of custom/default gave a gradient, present and finite."""
    m = metrics.get(f"{mode}~numeric")
    only = f"only {mode} was run"
    if mode == "custom" and _override_kept(t, "default"):
        only = f"no default ({t.absent['default']})"
    elif mode == "custom" and "default" in mode_errors:
        only = f"no default (it raised {mode_errors['default'].one_line()})"
    if m is None:
        return "unchecked", (f"{only} and there is no numeric reference: nothing checks the "
                             f"{mode} gradient of {t.name} (add the numeric mode to check it)")
    if not _checked_by_numeric(m):
        return "unchecked", f"{only}, and {_numeric_clause(metrics, mode)}"
    if m["allclose"]:
        return "match", f"{only}; {_numeric_clause(metrics, mode)}"
    if m.get("method") == "full" and mode == "custom" and not m.get("shape_mismatch"):
        g = np.asarray(t.grads[mode], dtype=np.float64).reshape(-1)
        n = np.asarray(t.grads["numeric"], dtype=np.float64).reshape(-1)
        wrong = ~close_mask(g, n, tolerances(t.dtype, numeric=True)) & numeric_defined(g, n)
        if np.all(n[wrong] == 0):
            return "surrogate", f"{only}; {_numeric_clause(metrics, mode)}, all where numeric is 0"
    return "differs", f"{only}; {_numeric_clause(metrics, mode)}"


def _no_default_gradient(t: TensorResult, c, metrics: dict) -> tuple[str, str]:
    """Default gives no gradient (its path is cut), custom gives a finite one: custom stands in
    for a missing gradient (`surrogate`), unless numeric shows it wrong where the true derivative
    is not zero (`differs`): a detached forward with a wrong backward is not a surrogate."""
    text = (f"default gives no gradient to {t.name} ({_why(t, 'default')}); custom gives one "
            f"(l2 norm {fmt(mode_stats(c)['l2'])}); {_numeric_clause(metrics, 'custom')}")
    m = metrics.get("custom~numeric")
    if m is None or _agrees_with_numeric(metrics) or m.get("shape_mismatch"):
        return ("differs" if m is not None and m.get("shape_mismatch") else "surrogate"), text
    tol = tolerances(t.dtype, numeric=True)
    if m["method"] == "full":
        g = np.asarray(c, dtype=np.float64).reshape(-1)
        n = np.asarray(t.grads["numeric"], dtype=np.float64).reshape(-1)
        wrong = int((~close_mask(g, n, tol) & (n != 0) & np.isfinite(n)).sum())
        if wrong <= max(1, int(KINK_FRACTION * n.size)):   # a step straddled, as at a kink
            return "surrogate", f"{text}, where numeric is 0"
        return "differs", f"{text}; {wrong} of them where numeric is not 0: custom is wrong there"
    n = np.asarray(t.numeric.projections["numeric"], dtype=np.float64)
    n = n[np.isfinite(n)]       # custom is finite here: a NaN/Inf projection judges nothing
    if np.all(np.abs(n) <= tol.atol_for(n)):
        return "surrogate", f"{text}, along which numeric is 0"
    return "differs", f"{text}, along which numeric is not 0: custom is wrong there"


def _judge(t: TensorResult, op_status: str, mode_errors: dict, error: Optional[ErrorInfo],
           metrics: dict, inplace: tuple = ()) -> tuple[str, str]:
    """`inplace`: tensors the op's forward wrote into in place (RunResult.inplace_inputs)."""
    if t.dtype in FIXED_DTYPES:
        kind = "integer" if t.dtype == "int64" else "bool"
        return "no-gradient", (f"{kind} input: no gradient ({t.dtype} inputs are passed as they "
                               "are, not differentiated and not perturbed by the numeric "
                               "reference; nothing was compared)")
    if op_status == "error":
        return "error", f"the op raised: {error.one_line()}" if error else "the op raised an error"
    if "custom" in mode_errors:
        return "error", f"the custom mode raised: {mode_errors['custom'].one_line()}"
    if t.name in inplace and "default" in mode_errors:
        return "error", (f"the forward writes into {t.name} in place and the framework's own "
                         f"autodiff refused it (default raised {mode_errors['default'].one_line()}); "
                         f"{_numeric_clause(metrics, 'custom')}, at the values before the call, "
                         f"which a graph that reads {t.name} again would not see")
    c, d = t.grads.get("custom"), t.grads.get("default")
    c_ran, d_ran = _ran(t, "custom"), _ran(t, "default") and "default" not in mode_errors
    if c is None and d is None and _independent(t):
        return "match", (f"the output does not depend on {t.name}: the numeric gradient is "
                         "exactly 0 and neither custom nor default gives one")
    if c_ran and d_ran:
        if c is None and d is None:
            return "broken", (f"no gradient reaches {t.name}: custom: {_why(t, 'custom')}; "
                              f"default: {_why(t, 'default')}")
        if c is None:
            l2 = mode_stats(d)["l2"]
            return "broken", (f"custom backward gives no gradient to {t.name} "
                              f"({_why(t, 'custom')}); default gives one (l2 norm {fmt(l2)})")
    if c is not None and not np.all(np.isfinite(c)):
        return "non-finite", _nonfinite_text(t, "custom", c)
    if c_ran and d_ran:
        if d is None:
            return _no_default_gradient(t, c, metrics)
        return _custom_vs_default(t, metrics)
    mode = "custom" if c_ran else "default" if d_ran else None
    if mode is None:
        err = mode_errors.get("default")
        if err is not None and err.kind != "cancelled":   # the one gradient asked for raised
            return "error", f"the default mode raised: {err.one_line()}"
        why = f" (default: {err.message})" if err is not None else \
            f" (no default: {t.absent['default']})" if _override_kept(t, "default") else ""
        return "unchecked", f"neither custom nor default was run for {t.name}{why}: nothing was compared"
    g = t.grads.get(mode)
    if g is None:
        return "broken", f"no gradient reaches {t.name}: {mode}: {_why(t, mode)} (only {mode} was run)"
    if not np.all(np.isfinite(g)):
        return "non-finite", _nonfinite_text(t, mode, g)
    return _one_mode_vs_numeric(t, mode, metrics, mode_errors)


def verdict(tensor: TensorResult, op_status: str = "ok", mode_errors: Optional[dict] = None,
            error: Optional[ErrorInfo] = None, inplace: tuple = ()) -> tuple[str, str]:
    """(verdict, one-sentence explanation with numbers) for one tensor."""
    return _judge(tensor, op_status, mode_errors or {}, error, tensor_metrics(tensor), inplace)


# --- per op ----------------------------------------------------------------------------------
def _stats(t: TensorResult, mode_errors: dict, known: Optional[dict] = None) -> dict:
    out = {}
    if t.dtype in FIXED_DTYPES:
        return out   # no mode differentiates an int64 / bool input
    for mode in MODES:
        if known and mode in known:
            out[mode] = known[mode]
        elif mode in t.grads:
            out[mode] = mode_stats(t.grads[mode])
        elif mode in t.absent:
            out[mode] = mode_stats(None, t.absent[mode])
        elif mode in mode_errors and mode_errors[mode].kind == "cancelled":   # not run to its end
            out[mode] = {**mode_stats(None, mode_errors[mode].message), "cancelled": True}
        elif mode in mode_errors:   # no gradient because the mode raised: an error, not absent
            out[mode] = {**mode_stats(None, failed_text(mode_errors[mode])), "raised": True}
        elif mode == "numeric" and t.numeric is not None and t.numeric.method == "projection":
            out[mode] = {"absent": True, "method": "projection", "directions": t.numeric.directions,
                         "reason": f"checked along {t.numeric.directions} random directions only"}
    return out


def compare_tensor(t: TensorResult, op_status: str = "ok", mode_errors: Optional[dict] = None,
                   error: Optional[ErrorInfo] = None, inplace: tuple = (),
                   earlier: Optional[tuple] = None) -> TensorComparison:
    """`earlier`: (TensorResult, TensorComparison) of an earlier result of the same tensor;
    what it worked out from the very same gradient arrays is taken, not computed again."""
    mode_errors = mode_errors or {}
    known_stats, known_metrics = _known(t, earlier)
    metrics = tensor_metrics(t, known_metrics)
    v, why = _judge(t, op_status, mode_errors, error, metrics, inplace)
    num_err = mode_errors.get("numeric") if t.dtype not in FIXED_DTYPES else None
    cancelled = num_err is not None and num_err.kind == "cancelled"
    failed = num_err is not None and not cancelled
    if cancelled:
        why += f" ({num_err.message}: custom is not checked against numeric)"
    elif failed:
        why += f" (numeric {failed_text(num_err)}: custom is not checked against numeric)"
    method = None
    if t.grads.get("numeric") is not None:
        method = "full"
    elif t.numeric is not None and t.numeric.method == "projection":
        method = "projection"
    return TensorComparison(t.name, t.role, tuple(t.shape), t.dtype, v, why,
                            _stats(t, mode_errors, known_stats), metrics, tolerances(t.dtype),
                            tolerances(t.dtype, numeric=True), method, cancelled, failed)


def failed_text(err: ErrorInfo) -> str:
    """How a mode failed, in words: "raised ValueError at ops.py:9: ..." for the user's
    exception; "failed: Timeout at ops.py:9: the numeric pass did not finish ..." for a call
    the worker never answered (a timeout, a crash, a memory kill: nothing was raised)."""
    return f"{'raised' if err.kind == 'error' else 'failed:'} {err.one_line()}"


# Verdicts that say the custom gradient passed: DESIGN.md's match needs custom to agree with
# numeric too, and surrogate is told from differs by numeric where default gives nothing
PASSING = ("match", "surrogate")
UNCHECKED = "numeric cancelled"
NUMERIC_FAILED = "numeric failed"


def shown_verdict(tc: TensorComparison) -> str:
    """The verdict as the window and its exports label it: a passing one whose numeric pass was
    cancelled reads "match, numeric cancelled", one whose numeric mode failed "match, numeric
    failed" (no verdict colour: it was not checked); a worse verdict stays as it is."""
    if tc.verdict in PASSING:
        if tc.numeric_cancelled:
            return f"{tc.verdict}, {UNCHECKED}"
        if tc.numeric_failed:
            return f"{tc.verdict}, {NUMERIC_FAILED}"
    return tc.verdict


def _known(t: TensorResult, earlier: Optional[tuple]) -> tuple[dict, dict]:
    """(stats by mode, metrics) of `earlier` that hold for `t`: those of its custom and default
    gradients where `t` has the very same array objects (the app's final result of an op holds
    its partial result's arrays: engine.numeric_pass). Equal-looking copies do not count."""
    if earlier is None:
        return {}, {}
    old_t, old_c = earlier
    if old_t.name != t.name or old_t.dtype != t.dtype:
        return {}, {}
    same = {m for m in ("custom", "default")
            if t.grads.get(m) is not None and t.grads.get(m) is old_t.grads.get(m)}
    stats = {m: old_c.stats[m] for m in same if m in old_c.stats}
    metrics = {k: old_c.metrics[k] for k in ("custom~default",)
               if same == {"custom", "default"} and k in old_c.metrics}
    return stats, metrics


def compare_result(result: RunResult, earlier: Optional[tuple] = None) -> OpComparison:
    """`earlier`: (RunResult, OpComparison) of an earlier result of the same op (the app's
    partial one): the numbers of gradient arrays the two share are taken from it."""
    olds: dict = {}
    if earlier is not None and earlier[1] is not None:
        olds = {ot.name: (ot, oc) for ot, oc in zip(earlier[0].tensors, earlier[1].tensors)}
    tensors = tuple(custom_not_found(result, t, compare_tensor(
        t, result.status, result.mode_errors, result.error, tuple(result.inplace_inputs),
        olds.get(t.name))) for t in result.tensors)
    return OpComparison(result.name, result.framework, result.device, result.status, result.error,
                        tensors)


def custom_not_found(result: RunResult, t: TensorResult,
                     tc: TensorComparison) -> TensorComparison:
    """The seed tutorial's trap: a Module / Layer whose backward-shaped method nothing called
    (RunResult.uncalled_backward) and no custom gradient of its own ran (no_own_gradient): custom
    is the framework's own autodiff, so whatever it agrees with, the custom gradient was not
    found (`broken`). Tensors the op's backward does not produce (its outputs, frozen
    parameters) keep theirs, as does one where custom differs from default after all (something
    of the user's did run)."""
    overruled = ("match", "surrogate", "differs", "unchecked")   # nothing worse was found
    if not (result.no_own_gradient and result.uncalled_backward) or t.role == "output" or \
            t.frozen or tc.verdict not in overruled:
        return tc
    m = tc.metrics.get("custom~default")
    if m is not None and not m["allclose"]:
        return tc
    caller = "Keras differentiates call" if result.framework == "tf" else \
        "autograd differentiates forward"
    why = (f"custom gradient not found: {result.uncalled_backward[0]} is never called ({caller} "
           "itself and never calls such a method), and nothing the op runs overrides the "
           "gradient, so custom is the framework's own autodiff; it would read: "
           f"{tc.verdict}, {tc.explanation}")
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

