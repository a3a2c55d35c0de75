"""How a check ends: pass / fail / skip results, and the numbers a failure message quotes."""

from __future__ import annotations

import numpy as np

from gradviz.compare.metrics import Tol, fmt, pair_metrics
from gradviz.errors import GradvizError
from gradviz.model import CheckResult, ErrorInfo
from gradviz.vocab import CheckStatus


class CheckFailed(GradvizError):
    """Raised inside a check to end it with a prepared result."""

    def __init__(self, result: CheckResult):
        super().__init__(result.message)
        self.result = result


def passed(name: str, message: str) -> CheckResult:
    return CheckResult(name, CheckStatus.PASS, message)


def skipped(name: str, reason: str) -> CheckResult:
    return CheckResult(name, CheckStatus.SKIP, reason)


def failed(name: str, kind: str, message: str, where: str, fix: str) -> CheckResult:
    return CheckResult(name, CheckStatus.FAIL, message, where, fix, kind)


def raised(
    name: str, err: ErrorInfo, during: str, kind: str = "raised", fix: str = ""
) -> CheckResult:
    """User code raised: the failure quotes the exception and points at the user's line."""
    return failed(
        name,
        kind,
        f"{during} raised {err.type}: {brief(err.message)}",
        err.where,
        fix
        or "Make the backward run the way the framework calls it here; the "
        "message above is the framework's own.",
    )


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def brief(text: str, limit: int = 240) -> str:
    """A framework's error message in one line. TensorFlow's graph errors start with "in user
    code:" and a listing of frames (gradviz's among them); the error itself is the last line."""
    text = str(text)
    if "in user code:" in text:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        text = lines[-1] if lines else text
    return _short(text, limit)


def first_line(text: str) -> str:
    """An error's first line: JAX's following lines name tracers and the frames that made them
    (gradviz's), not the user's fault."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return lines[0] if lines else str(text)


def compare(got, ref, tol: Tol) -> tuple[bool, str]:
    """(agree, "max abs difference X at N of M elements") for two gradients."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape == ref.shape and np.array_equal(got, ref) and np.isfinite(ref).all():
        # the same bits (compilers and batching often give them): pair_metrics' answer for
        # equal finite arrays, without its metrics (a fifth of torch's compiled check)
        return True, f"max abs difference {fmt(0.0)}"
    m = pair_metrics(got, ref, tol)
    if m.shape_mismatch:
        return False, f"shape {m.shape_mismatch}"
    if m.allclose:
        return True, f"max abs difference {fmt(m.max_abs_err)}"
    return False, (
        f"max abs difference {fmt(m.max_abs_err)} at {m.n_differ} of {m.n} elements ({tol})"
    )
