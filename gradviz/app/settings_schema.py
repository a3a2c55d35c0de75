"""The one settings schema: every key gradviz saves, its type, the values it may take and its
default, and the rule for each run setting (RunSettings' fields, by settings_texts' names) that
the CLI's flags, the window's settings panel, the settings file and the pytest plugin all apply
(run_settings). A value one of them refuses, all refuse; the panel's spin boxes take their
ranges from here. A value the settings file holds that the schema refuses never reaches a
widget: it falls back to its default and is named. Qt-free: the window's widgets take what this
hands them."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gradviz.errors import GradvizError
from gradviz.model import (
    DEPTH_RANGE,
    DTYPES,
    GRAPHS,
    MODES,
    RunSettings,
    parse_checks,
    parse_range,
    parse_shape,
    parse_upstream,
    settings_texts,
)
from gradviz.vocab import Framework

THEMES = ("follow desktop", "light", "dark")  # View > Theme (qt.theme.THEME_CHOICES)
# numpy's default_rng takes any non-negative int; the workers hand seeds on as uint32, so
# larger ones would wrap
SEED_RANGE = (0, 2**32 - 1)
# seconds per op and framework, to the hundredth (what the panel's box shows): above zero, and a
# day at most (no op's run waits longer; a bound the spin box can show)
TIMEOUT_RANGE = (0.01, 86400.0)
TIMEOUT_DECIMALS = 2
ITEMSIZE = {"float32": 4, "float64": 8}
LIST_MAX = 1000  # entries of a list setting (open / recent files)
TEXT_MAX = 4096  # characters of one text value (a path, a name)
RUN = settings_texts(RunSettings())  # the run settings' defaults: RunSettings' own


@dataclass(frozen=True)
class Setting:
    kind: str  # "int" | "float" | "bool" | "text" | "list" | "bytes"
    default: Any
    check: Callable[[Any], Any] | None = None  # raises ValueError on a value out of range


def _one_of(choices):
    def check(v):
        if v not in choices:
            raise ValueError(f"not one of {', '.join(choices)}")

    return check


# --- the run settings' rule: RunSettings' fields by settings_texts' names --------------------


class SettingsError(GradvizError, ValueError):
    """Run settings that cannot run: `problems` maps each field (settings_texts' names, as the
    flags: "seed" is --seed) to why, each message starting with the field's name."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("\n".join(problems.values()))
        self.problems = problems


def _integer(name: str, v: Any, lo: int, hi: int, what: str) -> int:
    text = str(v).strip()
    if isinstance(v, bool) or not (
        isinstance(v, int) or (text.lstrip("+-").isdigit() and len(text) <= 20)
    ):
        raise ValueError(f"{name} {v!r}: {what}")
    n = int(text)
    if not lo <= n <= hi:
        raise ValueError(f"{name} {n}: {what}")
    return n


def _seed(v: Any) -> int:
    lo, hi = SEED_RANGE
    return _integer("seed", v, lo, hi, f"give an integer from {lo} to {hi}")


def _depth(v: Any) -> int:
    lo, hi = DEPTH_RANGE
    return _integer("depth", v, lo, hi, f"the stack graph takes {lo} to {hi} layers")


def _timeout(v: Any) -> float:
    lo, hi = TIMEOUT_RANGE
    try:
        t = float(v) if not isinstance(v, bool) else math.nan
    except (TypeError, ValueError):
        t = math.nan
    if not (math.isfinite(t) and lo <= round(t, TIMEOUT_DECIMALS) <= hi):
        raise ValueError(f"timeout {v}: give a number of seconds from {lo:g} to {hi:g}")
    return round(t, TIMEOUT_DECIMALS)


def _choice(name: str, choices: tuple[str, ...]) -> Callable[[Any], str]:
    def parse(v: Any) -> str:
        if v not in choices:
            raise ValueError(f"{name} {v!r}: use one of {', '.join(choices)}")
        return str(v)

    return parse


def _items(v: Any) -> str:
    return v if isinstance(v, str) else ",".join(map(str, v))


def _shape(v: Any) -> tuple[int, ...]:
    return parse_shape(v if isinstance(v, str) else "x".join(map(str, v)))


def _input_range(v: Any) -> tuple[float, float]:
    return parse_range(v if isinstance(v, str) else ",".join(map(str, v)))


def _upstream(v: Any) -> str:
    text = str(v).strip()
    parse_upstream(text)
    return text


def _modes(v: Any) -> tuple[str, ...]:
    modes = tuple(m.strip() for m in _items(v).split(",") if m.strip())
    if not modes or any(m not in MODES for m in modes):
        raise ValueError(
            f"modes {_items(v)!r}: pick at least one of {','.join(MODES)} (comma-separated)"
        )
    return modes


def _checks(v: Any) -> tuple[str, ...]:
    return parse_checks(_items(v))


def _device(v: Any) -> str:
    if not isinstance(v, str) or not v or any(c.isspace() for c in v):
        raise ValueError(f"device {v!r}: name one, e.g. auto, cpu, cuda:0 or /GPU:0")
    return v


# field -> (the RunSettings attribute, its parser: the text or value -> the value, ValueError)
RUN_FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "graph": ("graph", _choice("graph", GRAPHS)),
    "shape": ("shape", _shape),
    "dtype": ("dtype", _choice("dtype", DTYPES)),
    "seed": ("seed", _seed),
    "upstream": ("upstream", _upstream),
    "device": ("device", _device),
    "modes": ("modes", _modes),
    "timeout": ("timeout", _timeout),
    "depth": ("depth", _depth),
    "checks": ("checks", _checks),
    "range": ("input_range", _input_range),
}


def memory_bytes() -> int | None:
    """Physical memory of this machine, or None where the platform does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _fits(shape: tuple[int, ...], dtype: str) -> None:
    """One tensor of `shape` larger than this machine's memory cannot run (the loosest sure bound)."""
    n = math.prod(shape)
    need, have = n * ITEMSIZE.get(dtype, 8), memory_bytes()
    if have is not None and need > have:
        raise ValueError(
            f"shape {'x'.join(map(str, shape))}: one tensor of {n:,} {dtype} values "
            f"needs {_gib(need)}, more than this machine's {_gib(have)} of memory"
        )


def _gib(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB"


def run_settings(values: Mapping[str, Any]) -> RunSettings:
    """The RunSettings `values` stand for (by settings_texts' field names; texts as the flags
    and the settings file write them, or the values themselves; a field left out takes its
    default). Raises SettingsError naming every field that cannot run, at once."""
    parsed: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for name, (attr, parse) in RUN_FIELDS.items():
        try:
            parsed[attr] = parse(values.get(name, RUN[name]))
        except (ValueError, TypeError, OverflowError) as exc:
            problems[name] = str(exc)
    if "shape" in parsed and "dtype" in parsed:
        try:
            _fits(parsed["shape"], parsed["dtype"])
        except ValueError as exc:
            problems["shape"] = str(exc)
    if problems:
        raise SettingsError({n: problems[n] for n in RUN_FIELDS if n in problems})
    return RunSettings(**parsed)


def _check(name: str) -> Callable[[Any], Any]:
    """The settings file's check of a run setting: the field's own rule."""
    return RUN_FIELDS[name][1]


# --- every key the settings file holds ----------------------------------------------------------


class Key:
    """The keys outside the run panel's fields, each spelt here only: every reader and writer
    names them (run_key / device_key name the panel's)."""

    LAUNCHED = "app/launched"  # set on every launch: with no key at all, the first one
    WATCH = "run/watch"  # Run > Watch files: a menu's, not a run setting
    THEME = "view/theme"
    LOG_SCALE = "view/log_scale"
    GEOMETRY = "window/geometry"
    LAST_DIR = "files/last_dir"  # where File > Open starts
    LAST_MODULE = "files/last_module"  # File > Open module's last name
    RECENT = "files/recent"
    OPEN = "files/open"  # the window's open files (app/open_list)
    HIDDEN_COLUMNS = "numbers/hidden_columns"


def run_key(field: str) -> str:
    """The key of a run setting the panel saves (settings_texts' names; devices: device_key)."""
    if field not in RUN_FIELDS or field == "device":
        raise KeyError(f"{field}: not a run setting saved under one key")
    return f"run/{field}"


def device_key(framework: str) -> str:
    return f"run/device/{Framework(framework).value}"


_KIND = {"seed": "int", "depth": "int", "timeout": "float"}  # the rest are texts
SCHEMA: dict[str, Setting] = {
    Key.LAUNCHED: Setting("bool", False),
    **{
        run_key(f): Setting(_KIND.get(f, "text"), RUN[f], _check(f))
        for f in RUN_FIELDS
        if f != "device"
    },
    Key.WATCH: Setting("bool", True),
    **{device_key(fw): Setting("text", RUN["device"], _check("device")) for fw in Framework},
    Key.THEME: Setting("text", THEMES[0], _one_of(THEMES)),
    Key.LOG_SCALE: Setting("bool", False),
    Key.GEOMETRY: Setting("bytes", None),
    Key.LAST_DIR: Setting("text", ""),
    Key.LAST_MODULE: Setting("text", ""),
    Key.RECENT: Setting("list", ()),
    Key.OPEN: Setting("list", ()),
    Key.HIDDEN_COLUMNS: Setting("text", None),  # None: the default columns
}


# the run panel's keys, all a reset to the defaults forgets (not Key.WATCH: a menu's)
RUN_KEYS = (
    *(run_key(f) for f in RUN_FIELDS if f != "device"),
    *(device_key(fw) for fw in Framework),
)


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
