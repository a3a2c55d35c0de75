"""The settings panel's fields to and from the settings file (app/settings_file.py, checked by
its schema): load() puts what is saved into the fields, a saved value they cannot show leaving
its default and its key named for the window to say so; save() writes what they show."""

from __future__ import annotations

from gradviz.app.settings_schema import RUN_FIELDS, RUN_KEYS, SCHEMA, device_key, run_key


def default(field: str):
    """A run setting's default: the schema's, RunSettings' own (as the CLI's)."""
    return SCHEMA[run_key(field)].default


DEFAULT_RANGE = default("range")


def load(panel, qs) -> list[str]:
    """Fill `panel`'s fields from `qs`; the saved values that were unusable ("key='raw'")."""
    fallbacks: list[str] = []

    def saved(field: str):
        return qs.value(run_key(field), default(field))

    panel.graph.setCurrentIndex(max(0, panel.graph.findData(saved("graph"))))
    panel.shape.setText(str(saved("shape")))
    panel.dtype.setCurrentText(str(saved("dtype")))
    panel.seed.setValue(_ruled(qs, "seed", fallbacks))
    panel.range.setText(_range_text(qs, fallbacks))
    panel.upstream.setCurrentText(str(saved("upstream")))
    modes = _ruled(qs, "modes", fallbacks)
    for m, cb in panel.modes.items():
        cb.setChecked(m in modes)
    panel.timeout.setValue(_ruled(qs, "timeout", fallbacks))
    panel.depth.setValue(_ruled(qs, "depth", fallbacks))
    chosen = _ruled(qs, "checks", fallbacks)
    for name, cb in panel.checks.items():
        cb.setChecked(name in chosen)
    for fw, box in panel.device.items():
        dev = qs.value(device_key(fw), SCHEMA[device_key(fw)].default)
        if box.findData(dev) < 0:
            box.addItem(dev, dev)
        box.setCurrentIndex(box.findData(dev))
    return fallbacks


def forget(qs) -> None:
    """Every run setting back to its default (what a fresh install starts with)."""
    for key in RUN_KEYS:  # not Key.WATCH: watching is a menu's, not a run's
        qs.remove(key)


def _ruled(qs, field: str, fallbacks: list[str]):
    """The saved value of `field` as the schema's rule for it reads it (what the CLI would
    take), else the default's (the key then listed in `fallbacks` so the window can say so)."""
    rule = RUN_FIELDS[field][1]
    raw = qs.value(run_key(field), default(field))
    try:
        return rule(raw)
    except (TypeError, ValueError, OverflowError):
        fallbacks.append(f"{run_key(field)}={raw!r}")
        return rule(default(field))


def _range_text(qs, fallbacks: list[str]) -> str:
    """The saved range when it parses, else the default (named in `fallbacks`)."""
    raw = qs.value(run_key("range"), DEFAULT_RANGE)
    if isinstance(raw, list) and all(isinstance(p, str) for p in raw):
        raw = ",".join(raw)  # a hand-written `range=-6,6` reads back as a list of two
    try:
        if not isinstance(raw, str):
            raise ValueError(raw)
        RUN_FIELDS["range"][1](raw)
        return raw
    except ValueError:
        fallbacks.append(f"{run_key('range')}={raw!r}")
        return DEFAULT_RANGE


def save(panel, qs) -> None:
    shown = {
        "graph": panel.graph.currentData(),
        "shape": panel.shape.text(),
        "dtype": panel.dtype.currentText(),
        "seed": int(panel.seed.value()),
        "range": panel.range.text(),
        "upstream": panel.upstream.currentText(),
        "modes": ",".join(m for m, cb in panel.modes.items() if cb.isChecked()),
        "timeout": panel.timeout.value(),
        "depth": panel.depth.value(),
        "checks": ",".join(n for n, cb in panel.checks.items() if cb.isChecked()),
    }
    for field, value in shown.items():
        qs.setValue(run_key(field), value)
    for fw, box in panel.device.items():
        qs.setValue(device_key(fw), box.currentData() or "auto")
