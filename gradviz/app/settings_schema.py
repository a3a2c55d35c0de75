"""The one settings schema: every key gradviz saves, its type, the values it may take and its
default. The settings file (app/settings_file.py) checks each value it reads here, with the
parsers and limits the CLI's flags use (model.parse_*, DEPTH_RANGE, cli-equivalent bounds), so a
value the command line would refuse never reaches a widget: it falls back to its default and is
named. Qt-free: the window's widgets take what this hands them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gradviz.model import (
    CHECKS,
    DEPTH_RANGE,
    DTYPES,
    GRAPHS,
    MODES,
    RunSettings,
    parse_range,
    parse_shape,
    parse_upstream,
    settings_texts,
)
from gradviz.vocab import Framework

THEMES = ("follow desktop", "light", "dark")  # View > Theme (qt.theme.THEME_CHOICES)
SEED_RANGE = (0, 2**31 - 1)  # what the panel's spin box shows
TIMEOUT_RANGE = (1.0, 3600.0)  # seconds, as the panel's spin box
LIST_MAX = 1000  # entries of a list setting (open / recent files)
TEXT_MAX = 4096  # characters of one text value (a path, a name)
RUN = settings_texts(RunSettings())  # the run settings' defaults: RunSettings' own


@dataclass(frozen=True)
class Setting:
    kind: str  # "int" | "float" | "bool" | "text" | "list" | "bytes"
    default: Any
    check: Callable[[Any], Any] | None = None  # raises ValueError on a value out of range


def _within(lo, hi):
    def check(v):
        if not (math.isfinite(v) and lo <= v <= hi):
            raise ValueError(f"not within {lo}..{hi}")

    return check


def _one_of(choices):
    def check(v):
        if v not in choices:
            raise ValueError(f"not one of {', '.join(choices)}")

    return check


def _subset_of(choices, allow_empty=True):
    def check(v):
        items = [p.strip() for p in v.split(",") if p.strip()]
        bad = [p for p in items if p not in choices]
        if bad or (not items and not allow_empty):
            raise ValueError(f"not a comma-separated subset of {','.join(choices)}")

    return check


def _device(v):
    if not v or any(c.isspace() for c in v):
        raise ValueError("not a device name")


SCHEMA: dict[str, Setting] = {
    "app/launched": Setting("bool", False),
    "run/graph": Setting("text", RUN["graph"], _one_of(GRAPHS)),
    "run/shape": Setting("text", RUN["shape"], parse_shape),
    "run/dtype": Setting("text", RUN["dtype"], _one_of(DTYPES)),
    "run/seed": Setting("int", RUN["seed"], _within(*SEED_RANGE)),
    "run/range": Setting("text", RUN["range"], parse_range),
    "run/upstream": Setting("text", RUN["upstream"], parse_upstream),
    "run/modes": Setting("text", RUN["modes"], _subset_of(MODES, allow_empty=False)),
    "run/timeout": Setting("float", RUN["timeout"], _within(*TIMEOUT_RANGE)),
    "run/depth": Setting("int", RUN["depth"], _within(*DEPTH_RANGE)),
    "run/checks": Setting("text", RUN["checks"], _subset_of(CHECKS)),
    "run/watch": Setting("bool", True),
    **{f"run/device/{fw}": Setting("text", RUN["device"], _device) for fw in Framework},
    "view/theme": Setting("text", THEMES[0], _one_of(THEMES)),
    "view/log_scale": Setting("bool", False),
    "window/geometry": Setting("bytes", None),
    "files/last_dir": Setting("text", ""),
    "files/last_module": Setting("text", ""),
    "files/recent": Setting("list", ()),
    "files/open": Setting("list", ()),
    "numbers/hidden_columns": Setting("text", None),  # None: the default columns
}


def parse(key: str, raw) -> Any:
    """The value of `key` that the text `raw` stands for (a list of texts, one a line, for a
    list setting); ValueError when it is not one the schema allows (a wrong type, out of range,
    too long, a key gradviz does not know)."""
    spec = SCHEMA.get(key)
    if spec is None:
        raise ValueError("not a gradviz setting")
    if spec.kind == "list":
        items = [r for r in ([raw] if isinstance(raw, str) else raw) if r]
        if len(items) > LIST_MAX or any(len(r) > TEXT_MAX for r in items):
            raise ValueError("too long")
        return items
    if not isinstance(raw, str):
        raise ValueError("given more than once")
    if len(raw) > TEXT_MAX:
        raise ValueError("too long")
    value = _typed(spec.kind, raw)
    if spec.check is not None:
        spec.check(value)
    return value


def _typed(kind: str, raw: str) -> Any:
    if kind == "int":
        if not raw.strip().lstrip("+-").isdigit() or len(raw.strip()) > 20:
            raise ValueError("not an integer")
        return int(raw)
    if kind == "float":
        value = float(raw)  # ValueError for text; inf/nan caught by checks
        if not math.isfinite(value):
            raise ValueError("not a finite number")
        return value
    if kind == "bool":
        low = raw.strip().lower()
        if low not in ("true", "false"):
            raise ValueError("not true or false")
        return low == "true"
    if kind == "bytes":
        return bytes.fromhex(raw.strip())
    return raw


def text_of(key: str, value: Any):
    """The text `value` is written as, a list of texts for a list setting
    (parse(key, text_of(key, value)) == value)."""
    kind = SCHEMA[key].kind if key in SCHEMA else "text"
    if kind == "bool":
        return (
            "true"
            if (value if isinstance(value, bool) else str(value).lower() == "true")
            else "false"
        )
    if kind == "bytes":
        return bytes(value).hex()
    if kind == "list":
        return [value] if isinstance(value, str) else [str(v) for v in value or []]
    return str(value)
