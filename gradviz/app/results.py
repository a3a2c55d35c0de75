"""Results by op: the newest analysis of each (framework, file, qualname), partial (custom and
default in, numeric still running) or final, and the request each was asked with."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gradviz.model import OpKey, RunRequest, RunResult

if TYPE_CHECKING:  # analysis (numpy curves) is imported by whoever analyses, not at start
    from gradviz.app.analysis import Analysis

PARTIAL, FINAL = "partial", "final"


def request_key(req: RunRequest) -> OpKey:
    return OpKey.of_request(req)


class Results:
    def __init__(self) -> None:
        self._by_key: dict[tuple, Analysis] = {}
        self._asked: dict[tuple, RunRequest] = {}

    def asked(self, requests) -> None:
        """Remember each request as asked for: a partial result comes back under a request
        without the numeric mode, and is stored under the one asked (its numeric column then
        says "computing…" rather than vanishing)."""
        self._asked.update((request_key(r), r) for r in requests)

    def asked_for(self, key) -> RunRequest | None:
        return self._asked.get(key)

    def put(self, analysis: Analysis) -> OpKey:
        res = analysis.result
        key = request_key(res.request)
        asked = self._asked.get(key)
        if res.partial and asked is not None:
            analysis = analysis.as_asked(asked)
        self._by_key[key] = analysis
        return key

    def keep(self, key, analysis: Analysis) -> None:
        """`analysis` (the op's earlier result) stays its result, asked as it was then: a run
        cancelled before the op started leaves it as the user last saw it."""
        self._by_key[key] = analysis
        self._asked[key] = analysis.result.request

    def add_checks(self, result: RunResult) -> tuple | None:
        """An op's contract checks, which arrive after its result, and their findings."""
        key = request_key(result.request)
        held = self._by_key.get(key)
        if held is None:
            return None
        self._by_key[key] = held.with_checks(result)
        return key

    def add_parity(self, analyses) -> list[OpKey]:
        """The parity rows of a pair's analyses (app.parity_rows.pair_parity): each held
        analysis of the very same run takes its rows; the keys that took them."""
        took = []
        for a in analyses:
            key = request_key(a.result.request)
            held = self._by_key.get(key)
            if held is not None and held.result.request is a.result.request:
                self._by_key[key] = replace(held, parity=a.parity)
                took.append(key)
        return took

    def get(self, key) -> Analysis | None:
        return self._by_key.get(key)

    def result(self, key) -> RunResult | None:
        a = self._by_key.get(key)
        return a.result if a is not None else None

    def stage(self, key) -> str | None:
        a = self._by_key.get(key)
        return None if a is None else (PARTIAL if a.result.partial else FINAL)

    def forget_file(self, file: str) -> None:
        self._by_key = {k: v for k, v in self._by_key.items() if k[1] != file}
        self._asked = {k: v for k, v in self._asked.items() if k[1] != file}

    def analyses(self) -> dict[tuple, Analysis]:
        return dict(self._by_key)

    def __contains__(self, key) -> bool:
        return key in self._by_key

    def __len__(self) -> int:
        return len(self._by_key)
