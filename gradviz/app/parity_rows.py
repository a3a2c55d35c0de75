"""Parity held by the analyses: each op's analysis keeps the rows (compare.parity) that compare
it with the op of the same name in another framework, attached once the ops are paired; the
report's top-level "parity" list is those rows again, each once, in compare.parity's order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from gradviz.app.analysis import Analysis
from gradviz.vocab import Framework


def with_parity(analyses: Sequence[Analysis]) -> list[Analysis]:
    """`analyses` with their parity rows: each op name's first ok result of each framework (the
    ones compare.parity compares) gets the rows naming its framework, every other one ()."""
    from gradviz.compare import parity

    rows = parity([a.result for a in analyses])
    chosen: dict[tuple[str, str], int] = {}
    for i, a in enumerate(analyses):
        if a.result.status == "ok":
            chosen.setdefault((a.result.name, a.result.framework), i)
    held: dict[int, list] = {}
    for row in rows:
        for fw in row.frameworks:
            held.setdefault(chosen[(row.op, fw)], []).append(row)
    return [replace(a, parity=tuple(held.get(i, ()))) for i, a in enumerate(analyses)]


def _pair_order(frameworks) -> tuple[int, ...]:
    order = [fw.value for fw in Framework]
    return tuple(order.index(f) if f in order else len(order) for f in frameworks)


def parity_in_order(analyses: Iterable[Analysis]) -> list:
    """The rows the analyses hold, each once (both ops of a pair hold it), as compare.parity
    lists them: op names in the order they first hold rows, then torch-tf, torch-jax, tf-jax,
    then each pair's rows as made."""
    seen: set[tuple] = set()
    rows: list = []
    first: dict[str, int] = {}
    for a in analyses:
        for row in a.parity or ():
            key = (row.op, tuple(row.frameworks), row.tensor, row.mode)
            if key in seen:
                continue
            seen.add(key)
            first.setdefault(row.op, len(first))
            rows.append(row)
    # sorted() is stable: within a pair of frameworks the rows keep their order
    return sorted(rows, key=lambda r: (first[r.op], _pair_order(r.frameworks)))


def pair_parity(pair: str, analyses: Sequence[Analysis]) -> list[Analysis]:
    """The window's pair (one analysis per framework, each op maybe named otherwise in its
    file) with its parity rows, the rows about the pair (app.analysis.result_as_pair)."""
    from gradviz.app.analysis import result_as_pair

    named = [replace(a, result=result_as_pair(a.result, pair)) for a in analyses]
    return [replace(a, parity=b.parity) for a, b in zip(analyses, with_parity(named))]
