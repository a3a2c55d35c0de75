"""The verdict of one tensor: how its custom gradient stands to the truth (DESIGN.md "Verdicts").

The truth is the numeric reference (numeric_metrics). Custom is judged against it first:
agreeing is `match` whatever default does; differing only where the true derivative is zero or
undefined is `surrogate`; differing anywhere else is `differs`. Default is a witness: what it
does is said beside the verdict (absent, NaN, off numeric: the default column is unreliable),
never held against custom. It judges only where numeric is unavailable (fallback.py), or the
upstream probe, which compares custom with default, and so only where default agrees with numeric.
"""

from __future__ import annotations

import numpy as np

from gradviz.compare.fallback import custom_vs_default, no_numeric_why
from gradviz.compare.kinks import witnessed
from gradviz.compare.metrics import close_mask, fmt, mode_stats, tolerances
from gradviz.compare.numeric_metrics import (
    KINK_FRACTION,
    PROBE,
    apart_from_numeric,
    checked_by_numeric,
    err_text,
    numeric_clause,
)
from gradviz.model import OVERRIDE_KEPT, ErrorInfo, TensorResult, fixed_dtype
from gradviz.vocab import ErrorKind, Mode

# A finite difference across a jump (round's x.5, a step's edge) reads about jump / 2h, with h
# REL_EPS of the input: far above any gradient. That element's derivative is undefined, not wrong.
JUMP_FACTOR = 1e3


def judge(
    t: TensorResult,
    op_status: str,
    mode_errors: dict,
    error: ErrorInfo | None,
    metrics: dict,
    inplace: tuple = (),
) -> tuple[str, str]:
    """(verdict, explanation). `inplace`: tensors the op's forward wrote into in place."""
    early = _before_any_gradient(t, op_status, mode_errors, error, metrics, inplace)
    if early is not None:
        return early
    c, d = t.grads.get(Mode.CUSTOM), t.grads.get(Mode.DEFAULT)
    c_ran, d_ran = ran(t, Mode.CUSTOM), ran(t, Mode.DEFAULT) and Mode.DEFAULT not in mode_errors
    if c is None and _independent(t):
        return "match", (
            f"the output does not depend on {t.name} here: the numeric gradient is "
            "exactly 0 and custom gives none"
            + (", default none either" if d is None else ", default zeros")
        )
    if c_ran and c is None:
        if d is not None:
            return "broken", (
                f"custom backward gives no gradient to {t.name} "
                f"({_why(t, 'custom')}); default gives one (l2 norm "
                f"{fmt(mode_stats(d).l2)})"
            )
        also = f"default: {_why(t, 'default')}" if d_ran else "only custom was run"
        return "broken", f"no gradient reaches {t.name}: custom: {_why(t, 'custom')}; {also}"
    if c is not None:
        return _judge_mode(t, Mode.CUSTOM, metrics, mode_errors)
    if d_ran:
        if d is None:
            return "broken", (
                f"no gradient reaches {t.name}: default: {_why(t, 'default')} "
                "(only default was run)"
            )
        return _judge_mode(t, Mode.DEFAULT, metrics, mode_errors)
    err = mode_errors.get(Mode.DEFAULT)
    if err is not None and err.kind != ErrorKind.CANCELLED:  # the one gradient asked for raised
        return "error", f"the default mode raised: {err.one_line()}"
    why = (
        f" (default: {err.message})"
        if err is not None
        else f" (no default: {t.absent['default']})"
        if override_kept(t, Mode.DEFAULT)
        else ""
    )
    return (
        "unchecked",
        f"neither custom nor default was run for {t.name}{why}: nothing was compared",
    )


def _before_any_gradient(t, op_status, mode_errors, error, metrics, inplace):
    if fixed_dtype(t.dtype):
        kind = "bool" if t.dtype == "bool" else "integer"
        return "no-gradient", (
            f"{kind} input: no gradient ({t.dtype} inputs are passed as they "
            "are, not differentiated and not perturbed by the numeric "
            "reference; nothing was compared)"
        )
    if op_status == "error":
        return "error", f"the op raised: {error.one_line()}" if error else "the op raised an error"
    if Mode.CUSTOM in mode_errors:
        return "error", f"the custom mode raised: {mode_errors['custom'].one_line()}"
    if t.frozen:
        return "no-gradient", (
            f"frozen parameter: {_why(t, 'custom')}; no mode differentiates "
            f"{t.name}, so nothing was compared"
        )
    if 0 in tuple(t.shape):  # any gradient of it agrees with any other: nothing to vouch for
        return "unchecked", (
            f"{t.name} is empty (shape {tuple(t.shape)}): it has no element to "
            "compare, so nothing checks its gradient; give the op a non-empty "
            "input to check its backward"
        )
    if t.name in inplace and Mode.DEFAULT in mode_errors:
        return "error", (
            f"the forward writes into {t.name} in place and the framework's own "
            f"autodiff refused it (default raised {mode_errors['default'].one_line()}); "
            f"{numeric_clause(metrics, 'custom')}, at the values before the call, "
            f"which a graph that reads {t.name} again would not see"
        )
    return None


def ran(t: TensorResult, mode: str) -> bool:
    """The mode ran and gave a gradient or none. A default whose override gradviz could not
    remove did not run as the framework's autodiff: it is left out of the verdict."""
    return mode in t.grads or (mode in t.absent and not override_kept(t, mode))


def override_kept(t: TensorResult, mode: str) -> bool:
    return t.absent.get(mode, "").startswith(OVERRIDE_KEPT)


def _why(t: TensorResult, mode: str) -> str:
    return t.absent.get(mode) or "no gradient"


def _numeric_of(t: TensorResult) -> np.ndarray | None:
    n = t.grads.get(Mode.NUMERIC)
    if n is None and t.numeric is not None:
        n = t.numeric.projections.get(Mode.NUMERIC)
    return n


def _independent(t: TensorResult) -> bool:
    """An input the output does not depend on, here: numeric exactly zero (every element, or
    every random direction), custom gives no gradient, default none or zeros."""
    if t.role not in ("input", "param") or Mode.CUSTOM not in t.absent:
        return False
    d, n = t.grads.get(Mode.DEFAULT), _numeric_of(t)
    if d is not None and np.any(np.asarray(d) != 0):
        return False
    return n is not None and bool(np.all(np.asarray(n) == 0))


def independent_of_output(t: TensorResult) -> bool:
    """For diagnostics: no gradient anywhere because none is due (DESIGN.md: a `match`)."""
    return Mode.CUSTOM not in t.grads and Mode.DEFAULT not in t.grads and _independent(t)


# --- one mode against numeric ----------------------------------------------------------------
def _judge_mode(t: TensorResult, mode: str, metrics: dict, mode_errors: dict) -> tuple[str, str]:
    """`mode`'s gradient is present: custom (default beside it or not), or default run alone."""
    g = t.grads[mode]
    bad = ~np.isfinite(np.asarray(g, dtype=np.float64).reshape(-1))
    if bad.any() and not _numeric_nonfinite_at(t, bad):
        return "non-finite", _nonfinite_text(t, mode, g)
    lead = _lead(t, mode, mode_errors)
    m = metrics.get(f"{mode}~numeric")
    if checked_by_numeric(m):
        if m.shape_mismatch:
            return "differs", lead + numeric_clause(metrics, mode)
        if agrees_with_numeric(t, mode, metrics):
            return _agrees(t, mode, metrics, mode_errors, lead)
        return _off_numeric(t, mode, metrics, lead)
    why = no_numeric_why(t, metrics, mode, mode_errors)
    if mode == Mode.CUSTOM and t.grads.get(Mode.DEFAULT) is not None:
        return custom_vs_default(t, metrics, why)
    return "unchecked", (
        f"{lead}{why}: nothing independent checks the {mode} gradient of "
        f"{t.name} (add the numeric mode, or the default, to check it)"
    )


def _lead(t: TensorResult, mode: str, mode_errors: dict) -> str:
    """Which witnesses there are, where one is missing by how the run was set up."""
    if mode == Mode.DEFAULT:
        return "only default was run; "
    if override_kept(t, Mode.DEFAULT):
        return f"no default ({t.absent['default']}); "
    err = mode_errors.get(Mode.DEFAULT)
    if err is not None:
        return f"no default (it {'was' if err.kind == ErrorKind.CANCELLED else 'raised'} {err.one_line()}); "
    if not ran(t, Mode.DEFAULT):
        return "only custom was run; "
    return ""


def _numeric_nonfinite_at(t: TensorResult, bad: np.ndarray) -> bool:
    """Numeric (every element) is NaN/Inf wherever the gradient is: the loss is not finite
    there, and a NaN gradient says so too (DESIGN.md: non-finite is NaN where numeric is finite)."""
    n = t.grads.get(Mode.NUMERIC)
    if n is None or np.size(n) != bad.size:
        return False
    return bool(np.all(~np.isfinite(np.asarray(n, dtype=np.float64).reshape(-1)[bad])))


def _flat64(g) -> np.ndarray:
    return np.asarray(g, dtype=np.float64).reshape(-1)


def _off_elements(t: TensorResult, mode: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gradient, numeric, where they differ and numeric is defined), flat, every element."""
    g, n, _, _, off = apart_from_numeric(
        t.grads[mode], t.grads[Mode.NUMERIC], tolerances(t.dtype, numeric=True)
    )
    return g, n, off


def _witnessed_off(t: TensorResult) -> np.ndarray:
    c, n, off = _off_elements(t, Mode.CUSTOM)
    return witnessed(t, off, n)


def _kink_allowance(n: int) -> int:
    """Elements off numeric that kinks explain without a second witness: 1 in 100."""
    return int(KINK_FRACTION * n)


def agrees_with_numeric(t: TensorResult, mode: str, metrics: dict) -> bool:
    """`mode` agrees with numeric, kinks aside. A kink the finite difference straddled is
    rare at random inputs: one in 100 elements at most, or, in a smaller tensor, one element
    at which default gives the very same value (two witnesses against one difference)."""
    m = metrics.get(f"{mode}~numeric")
    if m is None or m.allclose:
        return m is not None
    if m.method != "full" or m.shape_mismatch:
        return False
    if m.n_differ <= _kink_allowance(m.n):
        return mode != Mode.CUSTOM or not _witnessed_off(t).any()
    if mode != Mode.CUSTOM or m.n < 2 or m.n_differ > max(1, _kink_allowance(m.n)):
        return False
    d = t.grads.get(Mode.DEFAULT)
    if d is None or np.size(d) != np.size(t.grads[Mode.CUSTOM]):
        return False
    c, _, off = _off_elements(t, Mode.CUSTOM)
    return bool(np.all(close_mask(c[off], _flat64(d)[off], tolerances(t.dtype))))


def _agrees(t, mode, metrics, mode_errors, lead) -> tuple[str, str]:
    text = lead + numeric_clause(metrics, mode)
    if not metrics[f"{mode}~numeric"].allclose:
        text += " (at kinks the finite difference straddled, where numeric is neither side's slope)"
    if mode == Mode.DEFAULT:
        return "match", text
    probe = metrics.get(PROBE)
    note = default_note(t, metrics, mode_errors)
    if probe is not None and not probe.allclose:
        # default stands in for numeric under the probe's upstream: the tolerance is numeric's
        probe = probe.as_numeric or probe
    if probe is not None and probe.n_differ > _kink_allowance(probe.n):
        if default_trusted(t, metrics):
            own = t.grad_dtypes.get(Mode.CUSTOM, "")
            why = (
                f"the backward returns an integer gradient ({own}), which drops the fraction "
                "of every element"
                if own.startswith(("int", "uint", "bool"))
                else "the backward does not use its incoming gradient as the chain rule does (a "
                "correct one is linear in it)"
            )
            return "differs", (
                f"{text}, under this run's upstream; but under a random one they "
                f"differ (custom against default, which agrees with numeric) at "
                f"{probe.n_differ} of {probe.n} elements, {err_text(probe)}: "
                f"{why}"
            )
        note += (
            "; linearity in the upstream unchecked: the upstream probe compares custom with "
            "default under a random upstream, and default is no reference here"
        )
    return "match", f"{text}; {note}" if note else text


def default_trusted(t: TensorResult, metrics: dict) -> bool:
    """Default agrees with numeric: a reference for what numeric does not measure (the probe)."""
    m = metrics.get("default~numeric")
    return (
        checked_by_numeric(m)
        and not m.shape_mismatch
        and agrees_with_numeric(t, Mode.DEFAULT, metrics)
        and bool(np.all(np.isfinite(t.grads[Mode.DEFAULT])))
    )


def default_note(t: TensorResult, metrics: dict, mode_errors: dict) -> str:
    """What the default witness says, beside a custom that agrees with numeric."""
    d = t.grads.get(Mode.DEFAULT)
    if d is None:
        if ran(t, Mode.DEFAULT) and Mode.DEFAULT not in mode_errors:
            return (
                f"default gives no gradient ({_why(t, 'default')}): the default column is "
                "unreliable here, custom is judged against numeric"
            )
        return ""
    flat = _flat64(d)
    k = int(np.count_nonzero(~np.isfinite(flat)))
    if k:
        return (
            f"default is NaN/Inf at {k} of {flat.size} elements where custom is finite: the "
            "default column is unreliable here, custom is judged against numeric"
        )
    dm = metrics.get("default~numeric")
    if (
        checked_by_numeric(dm)
        and not dm.shape_mismatch
        and not agrees_with_numeric(t, Mode.DEFAULT, metrics)
    ):
        return (
            f"default differs from numeric at {dm.n_differ} of {dm.n} "
            f"{'random directions' if dm.method == 'projection' else 'elements'}: the "
            "default column is unreliable here (the framework's own autodiff of this forward "
            "is off), custom is judged against numeric"
        )
    cd = metrics.get("custom~default")
    if cd is not None and cd.allclose:
        return f"custom matches default at all {cd.n} elements"
    return ""


def _off_numeric(t, mode, metrics, lead) -> tuple[str, str]:
    """`mode` differs from numeric beyond kinks: a surrogate where the true derivative is zero
    or undefined at every element it differs at, else `differs`."""
    text = lead + numeric_clause(metrics, mode)
    m = metrics[f"{mode}~numeric"]
    if m.method == "full":
        g, n, off = _off_elements(t, mode)
        flat = off & (n == 0)
        jump = off & (n != 0) & (np.abs(n) > JUMP_FACTOR * (1 + np.abs(g)))
        rest = off & ~flat & ~jump
        seen = witnessed(t, rest, n) if mode == Mode.CUSTOM else np.zeros_like(rest)
        if int(rest.sum()) <= _kink_allowance(n.size) and not seen.any():
            where = f"all {int(flat.sum())} where numeric is exactly 0 (the forward is flat there)"
            if jump.any():
                where += f", or {int(jump.sum())} where it jumps (numeric reads a step straddled)"
            if rest.any():
                where += f", but for {int(rest.sum())} (kinks, at most 1 in 100)"
            return "surrogate", f"{text}: {where}; it agrees elsewhere"
        no_kink = f", default agreeing with numeric at {int(seen.sum())}" if seen.any() else ""
        return "differs", (
            f"{text}; {int(rest.sum())} of them where the derivative is defined "
            f"and not 0{no_kink}: {mode} is not the derivative of the forward there"
        )
    pn = _flat64(t.numeric.projections[Mode.NUMERIC])
    pn = pn[np.isfinite(pn)]
    tol = tolerances(t.dtype, numeric=True)
    if np.all(np.abs(pn) <= tol.atol_for(pn)):
        return "surrogate", f"{text}: numeric is 0 along every one (the forward is flat here)"
    if mode == Mode.CUSTOM and _differs_where_default_is_flat(t, metrics):
        return "surrogate", (
            f"{text}; default agrees with numeric, and custom differs from "
            "default only where default is 0 (straight-through style)"
        )
    return "differs", f"{text}, and numeric is not 0 along them: {mode} is wrong there"


def _differs_where_default_is_flat(t: TensorResult, metrics: dict) -> bool:
    d, c = t.grads.get(Mode.DEFAULT), t.grads[Mode.CUSTOM]
    if d is None or np.size(d) != np.size(c) or not default_trusted(t, metrics):
        return False
    c, d = _flat64(c), _flat64(d)
    return bool(np.all(d[~close_mask(c, d, tolerances(t.dtype))] == 0))


def _nonfinite_text(t: TensorResult, mode: str, g) -> str:
    g = _flat64(g)
    bad = ~np.isfinite(g)
    counts = f"{int(np.isnan(g).sum())} NaN and {int(np.isinf(g).sum())} Inf"
    text = f"{mode} gradient of {t.name} has {counts} of {g.size} elements"
    n = t.grads.get(Mode.NUMERIC)
    if n is not None and np.size(n) == g.size:
        fin = int(np.isfinite(_flat64(n)[bad]).sum())
        text += f", where numeric is finite at {fin} of them"
    if mode != Mode.CUSTOM:
        return text
    d = t.grads.get(Mode.DEFAULT)
    if d is None:
        return text + ("; default gives no gradient" if ran(t, Mode.DEFAULT) else "")
    d = _flat64(d)
    if d.size != g.size:
        return text
    same = int((~np.isfinite(d[bad])).sum())
    if same == bad.sum() and (~np.isfinite(d)).sum() == same:
        return text + "; default has NaN/Inf at the same places"
    if same == 0:
        return text + "; default is finite there"
    return text + f"; default has NaN/Inf at {same} of those places"
