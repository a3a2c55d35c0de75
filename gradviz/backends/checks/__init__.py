"""Contract checks: the ways real training calls a backward, beyond one plain call.

One module per check; each has `torch_check(ctx)`, `tf_check(ctx)` and `jax_check(ctx)`
returning a CheckResult (see outcome.py); a framework's part too large for its check's module
lives in checks/{framework}_{name}.py (jax_vmap.py), which run_one looks in first. Worker-only:
the frameworks are imported inside the check functions. `run_checks` runs the requested ones
after the plain modes; user code that raises inside a check becomes a `fail` at the user's
file:line, never a crash of the run; a check whose own code raises is gradviz's failure, never
the user's: a `skip` that says so, with the exception."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sysconfig
import traceback

import numpy as np

import gradviz
from gradviz.backends.checks.outcome import CheckFailed, raised
from gradviz.backends.user_code import USER_FAILURES, error_info
from gradviz.model import CHECKS, CheckResult
from gradviz.user_frames import in_gradviz, is_user_frame
from gradviz.vocab import CheckStatus, ErrorKind


def run_checks(ctx, names, skip=None) -> tuple[CheckResult, ...]:
    """The checks `names`, in CHECKS order; those in `skip` ({name: reason}) skipped."""
    skip = skip or {}
    # what leaves precision without a float64 reference leaves the float64 witness
    # (float64_witness.py) without one too
    ctx.float64_unfit = skip.get("precision", "")
    out = []
    for name in (n for n in CHECKS if n in names):
        out.append(
            CheckResult(name, CheckStatus.SKIP, skip[name]) if name in skip else run_one(ctx, name)
        )
    return tuple(out)


# checks that compare the op with itself in another way, or with finite differences of it
_FINITE_DIFFERENCES = ("double_backward", "precision")


def unfit(numeric_error) -> dict:
    """{check: why it is skipped} when the numeric pass found the forward unfit for comparison:
    a random forward (ForwardNotRepeatable) gives other values at every call, so every check
    compared two draws (GV702 read a 'numeric second derivative' of 8e5 from a Dropout); one
    below float64 (NumericLowPrecision) has no float64 re-run nor numeric second derivative."""
    kind = getattr(numeric_error, "type", "")
    if kind == "ForwardNotRepeatable":
        why = (
            "the forward is not repeatable (random ops): every check compares calls of it, "
            "and two calls draw differently"
        )
        return {name: why for name in CHECKS}
    if kind == "ForwardDependsOnDtype":
        why = "the forward computes another function in float64: no float64 reference"
        return {name: why for name in _FINITE_DIFFERENCES}
    if kind == "NumericLowPrecision":
        why = (
            "the forward computes below float64 whatever its inputs are: no float64 "
            "reference to check against"
        )
        return {name: why for name in _FINITE_DIFFERENCES}
    return {}


_module_names: dict[tuple[str, str], str] = {}  # (check, framework) -> its module's name


def _module_of(name: str, framework: str):
    """Where `{framework}_check` of check `name` is: checks/{framework}_{name}.py where one
    framework's part has a module of its own (jax_vmap.py: vmap.py would pass 400 lines), else
    checks/{name}.py. Which one is looked up once per worker (find_spec reads the folder:
    ~0.2 ms of a small torch op's six checks)."""
    found = _module_names.get((name, framework))
    if found is None:
        own = f"{__name__}.{framework}_{name}"
        found = own if importlib.util.find_spec(own) else f"{__name__}.{name}"
    module = importlib.import_module(found)
    _module_names[name, framework] = found  # once it imports
    return module


def run_one(ctx, name: str) -> CheckResult:
    try:
        module = _module_of(name, ctx.framework)
        check = getattr(module, f"{ctx.framework}_check", None)
        if check is None:
            return CheckResult(
                name, CheckStatus.SKIP, f"gradviz has no {name} check for {ctx.framework} yet"
            )
        result = check(ctx)
    except CheckFailed as exc:
        result = exc.result
    except USER_FAILURES as exc:  # noqa: BLE001 - user code raised in a way the check did not expect
        if raised_in_gradviz(exc):
            return CheckResult(name, CheckStatus.SKIP, gradviz_failed(name, exc))
        err = error_info(exc, ErrorKind.ERROR, ctx.backward_where())
        result = raised(name, err, f"the {name.replace('_', ' ')} check")
    return result


_GRADVIZ_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(gradviz.__file__)))
# what gradviz calls that raises on its behalf: numpy (a broadcast error), the standard library
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)) + os.sep
_STDLIB_DIR = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


def raised_in_gradviz(exc: BaseException) -> bool:
    """The exception comes from gradviz's own code: its innermost frame, numpy's and the
    standard library's left aside (np.allclose raising a broadcast error for gradviz), is in the
    gradviz package and not the user's. An error raised in the user's code, or by a framework
    refusing it, is the user's."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if is_user_frame(frame.filename):
            return False
        if not os.path.isabs(frame.filename):
            continue  # <frozen importlib._bootstrap>, <string>
        path = os.path.abspath(frame.filename)
        if path.startswith(_NUMPY_DIR):
            continue
        if in_gradviz(path):
            return True
        if "site-packages" in path or "dist-packages" in path or not path.startswith(_STDLIB_DIR):
            return False  # a framework refusing the user's op: the user's to hear
    return False


def gradviz_failed(name: str, exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    at = next(
        (
            f"{os.path.relpath(f.filename, _GRADVIZ_PARENT)}:{f.lineno}"
            for f in reversed(frames)
            if in_gradviz(f.filename)
        ),
        "",
    )
    text = " ".join(str(exc).split())[:200]
    return (
        f"gradviz's own {name} check failed ({type(exc).__name__}: {text}"
        f"{f', at {at}' if at else ''}): a gradviz bug, not a fault of the op, and the check "
        "says nothing about it; please report it"
    )


def skipped_all(names, reason: str) -> tuple[CheckResult, ...]:
    """Every requested check skipped for one reason (the op itself failed to run)."""
    return tuple(CheckResult(n, CheckStatus.SKIP, reason) for n in CHECKS if n in names)
