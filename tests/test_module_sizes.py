"""Small files with one job: a module of gradviz is at most CEILING lines (formatted by ruff).
The modules the formatter took past it are listed with their size then: they may shrink, never
grow, until they are split (then their line goes)."""

from __future__ import annotations

from pathlib import Path

import gradviz

CEILING = 400
# module -> its lines when `ruff format` was adopted (issue 27): to be split
OVER: dict[str, int] = {}


def test_no_module_grows_past_its_ceiling():
    root = Path(gradviz.__file__).parent
    sizes = {
        p.relative_to(root).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in root.rglob("*.py")
    }
    too_long = {m: n for m, n in sizes.items() if n > OVER.get(m, CEILING)}
    assert not too_long, f"split these modules (at most {CEILING} lines): {too_long}"
    stale = {m for m in OVER if m not in sizes or sizes[m] <= CEILING}
    assert not stale, f"within the ceiling now, take them out of OVER: {sorted(stale)}"
