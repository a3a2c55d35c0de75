"""The CHECKS pass of a run: each op's contract checks, merged into its final result.

A run that fails here leaves its op's checks skipped, saying why."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from gradviz.engine.passes import CHECKS_PASS
from gradviz.model import CHECK_CANCELLED, CHECKS, CheckResult, RunRequest, RunResult
from gradviz.vocab import CheckStatus, ErrorKind, Mode


class ChecksMerge:
    """The requests of the CHECKS pass (`pending`) and `deliver`, which puts each one's checks
    into its op's final result (`results`) and hands that to `on_checks`."""

    def __init__(self, requests: list, results: list, on_checks: Callable[[RunResult], None]):
        self.requests = requests
        self.results = list(results)
        self._on_checks = on_checks
        todo = [i for i, pair in enumerate(zip(requests, results)) if _takes(*pair)]
        self.pending = [CHECKS_PASS.asks(requests[i]) for i in todo]
        self._slots: dict[RunRequest, list[int]] = {}
        for i, req in zip(todo, self.pending):
            self._slots.setdefault(req, []).append(i)

    def deliver(self, res: RunResult) -> None:
        i = self._slots[res.request].pop(0)
        checks = res.checks if res.status == "ok" else checks_skipped(res)
        self.results[i] = replace(self.results[i], checks=checks, request=self.requests[i])
        self._on_checks(self.results[i])


def _takes(req: RunRequest, res: RunResult) -> bool:
    # not a skipped op's, nor one whose numeric pass hung or crashed its worker (its float64
    # checks would most likely cost another timeout or crash)
    return (
        CHECKS_PASS.takes(req)
        and res.status == "ok"
        and not res.numeric_cancelled
        and not (res.numeric_failed and res.mode_errors[Mode.NUMERIC].kind != ErrorKind.ERROR)
    )


def checks_skipped(res: RunResult) -> tuple:
    why = (
        f"{CHECK_CANCELLED} ({res.error.message})"
        if res.error and res.error.kind == ErrorKind.CANCELLED
        else f"the checks run failed: {res.error.one_line()}"
        if res.error
        else "the checks run failed"
    )
    return tuple(
        CheckResult(n, CheckStatus.SKIP, why) for n in CHECKS if n in res.request.settings.checks
    )
