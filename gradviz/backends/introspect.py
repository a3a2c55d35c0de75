"""The line a user sees as the definition: the `class` / `def` line, not its first decorator."""
from __future__ import annotations

import inspect


def definition_line(obj) -> int:
    try:
        lines, start = inspect.getsourcelines(obj)
    except (OSError, TypeError):
        return getattr(getattr(obj, "__code__", None), "co_firstlineno", 1)
    for offset, text in enumerate(lines):
        if text.lstrip().startswith(("class ", "def ", "async def ")):
            return start + offset
    return start
