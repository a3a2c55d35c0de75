"""A run's passes as data, and the typed events the engine yields as they go.

A run is a sequence of passes, planned before it starts (`plan`): the CLI's is one pass
(FULL: each op as asked, checks inside it); the window's is QUICK -> NUMERIC -> CHECKS: every
op without its numeric mode first (shown at once), then every op in full (the numeric reference
added to its QUICK result; an op without numeric runs whole), then the contract checks of every
op on their own, after all its results. Each pass says what
it asks the worker for an op and what event each answer is; Engine.run runs them in this order
(each framework's worker goes from its QUICK share straight on to its NUMERIC share; CHECKS
waits for both) and hands each event to one `on_event`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from gradviz.model import RunRequest, RunResult
from gradviz.vocab import Mode


@dataclass(frozen=True)
class OpStarted:
    """An op's worker takes it (its first pass of the run)."""

    request: RunRequest


@dataclass(frozen=True)
class ResultArrived:
    """An op's result: partial (QUICK's: the numeric mode still to come) or final."""

    result: RunResult

    @property
    def partial(self) -> bool:
        return self.result.partial


@dataclass(frozen=True)
class ChecksArrived:
    """An op's contract checks (CHECKS), merged into its final result."""

    result: RunResult


RunEvent = OpStarted | ResultArrived | ChecksArrived


def without_numeric(req: RunRequest) -> RunRequest:
    modes = tuple(m for m in req.settings.modes if m != Mode.NUMERIC)
    return replace(req, settings=req.settings.with_(modes=modes))


def without_checks(req: RunRequest) -> RunRequest:
    return replace(req, settings=req.settings.with_(checks=()))


def checks_only(req: RunRequest) -> RunRequest:
    """The plain modes without numeric (a check that needs numeric computes it), then the checks."""
    modes = tuple(m for m in req.settings.modes if m != Mode.NUMERIC) or (Mode.CUSTOM,)
    return replace(req, settings=req.settings.with_(modes=modes))


@dataclass(frozen=True)
class Pass:
    name: str
    asks: Callable[[RunRequest], RunRequest]  # the request its worker gets for an op
    takes: Callable[[RunRequest], bool]  # which ops of the run it runs
    event: type  # what each of its answers is


def _all(_req: RunRequest) -> bool:
    return True


def _has_numeric(req: RunRequest) -> bool:
    return Mode.NUMERIC in req.settings.modes


def _has_checks(req: RunRequest) -> bool:
    return bool(req.settings.checks)


def _as_asked(req: RunRequest) -> RunRequest:
    return req


FULL_PASS = Pass("full", _as_asked, _all, ResultArrived)
QUICK_PASS = Pass("quick", without_numeric, _has_numeric, ResultArrived)  # partial results
NUMERIC_PASS = Pass("numeric", _as_asked, _all, ResultArrived)  # numeric joins QUICK's result
CHECKS_PASS = Pass("checks", checks_only, _has_checks, ChecksArrived)


def plan(requests: Iterable[RunRequest], progressive: bool, checks_apart: bool) -> tuple[Pass, ...]:
    """The passes of a run. `progressive` (the window): QUICK then NUMERIC, when some op has
    the numeric mode; `checks_apart` too: the checks in a CHECKS pass of their own, when some op
    has checks. Otherwise one FULL pass."""
    requests = list(requests)
    if not progressive:
        return (FULL_PASS,)
    passes: tuple[Pass, ...] = (
        (QUICK_PASS, NUMERIC_PASS) if any(map(QUICK_PASS.takes, requests)) else (FULL_PASS,)
    )
    if checks_apart and any(map(CHECKS_PASS.takes, requests)):
        passes += (CHECKS_PASS,)
    return passes
