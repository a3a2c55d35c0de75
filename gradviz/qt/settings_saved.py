"""The settings panel's fields to and from the settings file (app/settings_file.py, checked by
its schema): load() puts what is saved into the fields, a saved value they cannot show leaving
its default and its key named for the window to say so; save() writes what they show."""

from __future__ import annotations

import math

from gradviz.app.settings_schema import SCHEMA
from gradviz.model import parse_range


def default(key: str):
    """A setting's default: the schema's, for the run settings RunSettings' own (as the CLI's)."""
    return SCHEMA[key].default


DEFAULT_RANGE = default("run/range")


def load(panel, qs) -> list[str]:
    """Fill `panel`'s fields from `qs`; the saved values that were unusable ("key='raw'")."""
    fallbacks: list[str] = []

    def saved(key: str):
        return qs.value(key, default(key))

    panel.graph.setCurrentIndex(max(0, panel.graph.findData(saved("run/graph"))))
    panel.shape.setText(str(saved("run/shape")))
    panel.dtype.setCurrentText(str(saved("run/dtype")))
    panel.seed.setValue(_number(qs, "run/seed", int, panel.seed, fallbacks))
    panel.range.setText(_range_text(qs, fallbacks))
    panel.upstream.setCurrentText(str(saved("run/upstream")))
    modes = saved("run/modes")
    modes = modes.split(",") if isinstance(modes, str) else list(modes or [])
    for m, cb in panel.modes.items():
        cb.setChecked(m in modes)
    panel.timeout.setValue(_number(qs, "run/timeout", float, panel.timeout, fallbacks))
    panel.depth.setValue(_number(qs, "run/depth", int, panel.depth, fallbacks))
    chosen = str(saved("run/checks") or "").split(",")
    for name, cb in panel.checks.items():
        cb.setChecked(name in chosen)
    for fw, box in panel.device.items():
        dev = saved(f"run/device/{fw}")
        if box.findData(dev) < 0:
            box.addItem(dev, dev)
        box.setCurrentIndex(box.findData(dev))
    return fallbacks


def forget(qs) -> None:
    """Every run setting back to its default (what a fresh install starts with)."""
    for key in qs.allKeys():
        if key.startswith("run/") and key != "run/watch":  # watching is a menu's, not a run's
            qs.remove(key)


def _number(qs, key: str, kind, box, fallbacks: list[str]):
    """The saved number at `key` when it is one the spin box can show, else its default (the
    key is then listed in `fallbacks` so the window can say so)."""
    value = raw = qs.value(key, default(key))
    try:
        value = kind(raw)
        ok = math.isfinite(value) and box.minimum() <= value <= box.maximum()
    except (TypeError, ValueError, OverflowError):
        ok = False
    if ok:
        return value
    fallbacks.append(f"{key}={raw!r}")
    return default(key)


def _range_text(qs, fallbacks: list[str]) -> str:
    """The saved range when it parses, else the default (named in `fallbacks`)."""
    raw = qs.value("run/range", DEFAULT_RANGE)
    if isinstance(raw, list) and all(isinstance(p, str) for p in raw):
        raw = ",".join(raw)  # a hand-written `range=-6,6` reads back as a list of two
    try:
        if not isinstance(raw, str):
            raise ValueError(raw)
        parse_range(raw)
        return raw
    except ValueError:
        fallbacks.append(f"run/range={raw!r}")
        return DEFAULT_RANGE


def save(panel, qs) -> None:
    qs.setValue("run/graph", panel.graph.currentData())
    qs.setValue("run/shape", panel.shape.text())
    qs.setValue("run/dtype", panel.dtype.currentText())
    qs.setValue("run/seed", panel.seed.value())
    qs.setValue("run/range", panel.range.text())
    qs.setValue("run/upstream", panel.upstream.currentText())
    qs.setValue("run/modes", ",".join(m for m, cb in panel.modes.items() if cb.isChecked()))
    qs.setValue("run/timeout", panel.timeout.value())
    qs.setValue("run/depth", panel.depth.value())
    qs.setValue("run/checks", ",".join(n for n, cb in panel.checks.items() if cb.isChecked()))
    for fw, box in panel.device.items():
        qs.setValue(f"run/device/{fw}", box.currentData() or "auto")
