"""Work split by framework: each framework's share in its own thread, the frameworks at once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable


def by_framework(requests) -> dict[str, list[int]]:
    """Indexes of the requests of each framework, in order."""
    out: dict[str, list[int]] = {}
    for i, r in enumerate(requests):
        out.setdefault(r.framework, []).append(i)
    return out


def in_parallel(fn: Callable[[str], None], keys: Iterable[str]) -> None:
    threads = [threading.Thread(target=fn, args=(k,), daemon=True) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
