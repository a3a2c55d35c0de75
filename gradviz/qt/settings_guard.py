"""Settings are plain values: a `@Variant(...)` value in the settings file is Qt's serialized
QVariant, which PySide turns back into a Python object by unpickling it when it is read, so a
planted one runs code. Such values are dropped from the file before anything reads a value."""
from __future__ import annotations

import re

from PySide6.QtCore import QSettings

_SECTION = re.compile(r"^\s*\[(.*)\]\s*$")
_ENTRY = re.compile(r"^\s*([^=]+?)\s*=\s*(.*)$")


def drop_pickled_values(qs: QSettings) -> list[str]:
    """Remove every `@Variant(...)` value from `qs` (read as text, never through Qt) and return
    the keys removed. A file that cannot be read as text leaves `qs` as it is; one whose bad key
    cannot be named is cleared (its values then fall back to their defaults)."""
    path = qs.fileName()
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []                       # no file yet, or a format that is not a file
    section, bad = "", []
    for line in lines:
        m = _SECTION.match(line)
        if m:
            section = "" if m.group(1) == "General" else m.group(1)
            continue
        m = _ENTRY.match(line)
        if m and m.group(2).lstrip().startswith("@Variant("):
            bad.append(f"{section}/{m.group(1)}" if section else m.group(1))
    if not bad:
        return []
    keys = set(qs.allKeys())            # lists keys only: reads no value
    if all(k in keys for k in bad):
        for k in bad:
            qs.remove(k)
    else:                               # escaped names we do not decode: drop everything
        qs.clear()
    qs.sync()
    return bad
