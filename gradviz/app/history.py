"""Each op's last few runs (issue 28 item 5, before and after): a fix re-run no longer throws
the old result away. Kept in memory only, newest first, with the settings and the sha1 of the
op's file as the run started, and the op's mark (its worst verdict) then: the grid can draw this
run against an earlier one, the op tree marks an op whose verdict changed, and the window's JSON
export lists them under "history" (a key `gradviz run --json` leaves out: one run has none).
"""

from __future__ import annotations

import hashlib
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gradviz.model import RunSettings

if TYPE_CHECKING:
    from gradviz.app.analysis import Analysis

HISTORY_LENGTH = 5  # runs kept per op: each holds its gradients (memory)


def source_sha1(path: str) -> str:
    """The sha1 of the file's bytes now ("" when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha1(f.read()).hexdigest()
    except OSError:
        return ""


@dataclass(frozen=True)
class PastRun:
    number: int  # the window's run (batch) number, 1 for the first
    finished_at: float  # time.time() when its final result came back
    settings: RunSettings
    source_sha1: str  # of the op's file when the run started
    analysis: Analysis
    mark: str  # the op's mark then (AppState.op_mark: its worst verdict)

    def label(self) -> str:
        """ "run 2 (14:31:05, differs)": what the grid's run picker lists."""
        return (
            f"run {self.number} ({time.strftime('%H:%M:%S', time.localtime(self.finished_at))}"
            + (f", {self.mark})" if self.mark else ")")
        )

    def as_dict(self) -> dict:
        comp = self.analysis.comparison
        return {
            "run": self.number,
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.finished_at)),
            "source_sha1": self.source_sha1,
            "mark": self.mark,
            "verdicts": {t.name: str(t.verdict) for t in comp.tensors} if comp is not None else {},
            "settings": self.settings.as_dict(),
        }


class RunHistory:
    def __init__(self, length: int = HISTORY_LENGTH) -> None:
        self.length = length
        self._runs: dict[tuple, deque[PastRun]] = {}

    def add(self, key, run: PastRun) -> None:
        self._runs.setdefault(key, deque(maxlen=self.length)).appendleft(run)

    def remark(self, key, mark: str) -> None:
        """The newest run's mark again: its contract checks came after its result."""
        runs = self._runs.get(key)
        if runs:
            runs[0] = replace(runs[0], mark=mark)

    def runs(self, key) -> list[PastRun]:
        """Newest first; the first is the run the window shows."""
        return list(self._runs.get(key, ()))

    def run(self, key, number: int) -> PastRun | None:
        return next((r for r in self._runs.get(key, ()) if r.number == number), None)

    def change(self, key) -> tuple[str, str] | None:
        """(previous mark, newest mark) when they differ: the verdict changed since last run."""
        runs = self._runs.get(key)
        if not runs or len(runs) < 2 or runs[0].mark == runs[1].mark:
            return None
        return runs[1].mark, runs[0].mark

    def forget_file(self, file: str) -> None:
        self._runs = {k: v for k, v in self._runs.items() if k[1] != file}

    def as_dicts(self) -> list[dict]:
        """The JSON export's "history": per op, its kept runs newest first."""
        return [
            {"framework": k[0], "file": k[1], "qualname": k[2], "runs": [r.as_dict() for r in runs]}
            for k, runs in self._runs.items()
            if runs
        ]
