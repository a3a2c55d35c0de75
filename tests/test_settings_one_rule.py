"""One settings schema (issue 27): every field of RunSettings is taken or refused alike by the
CLI's flags, the window's settings panel (typed or picked as a user would), the settings file
and the pytest plugin (gradviz.testing.settings_for), at the edges of the ranges the schema
declares. The window used to refuse seeds above 2**31-1 and timeouts outside 1..3600 s that
`gradviz run` took."""

from dataclasses import fields

import pytest

from gradviz.app.settings_schema import (
    RUN_FIELDS,
    SEED_RANGE,
    TIMEOUT_RANGE,
    SettingsError,
    memory_bytes,
    run_settings,
)
from gradviz.cli.commands import UsageError, _run_parser, settings_from
from gradviz.model import CHECKS, DEPTH_RANGE, DTYPES, GRAPHS, MODES, RunSettings
from gradviz.testing.run import settings_for

SEED_LO, SEED_HI = SEED_RANGE
T_LO, T_HI = TIMEOUT_RANGE
D_LO, D_HI = DEPTH_RANGE
HAVE = memory_bytes()  # None where the platform does not say: no shape is then too big
TOO_BIG = [str(HAVE // 4 + 1)] if HAVE else []  # one float32 tensor past this machine's memory

# field -> (texts every part takes, texts every part refuses): the edges of each rule
EDGES = {
    "graph": (list(GRAPHS), ["Stack", "", "graph"]),
    "shape": (["1", "4x50", "200"], ["0", "4x0", "-3", "4y", "", *TOO_BIG]),
    "dtype": (list(DTYPES), ["float16", "int64", ""]),
    "seed": (
        [str(SEED_LO), str(SEED_HI), str(2**31), "7"],
        [str(SEED_LO - 1), str(SEED_HI + 1), "1.5", "x"],
    ),
    "upstream": (
        ["ones", "random", "const:0.5", "const:-2", " random"],
        ["const:nan", "const:inf", "twos", "", "const:"],
    ),
    "device": (["auto", "cpu", "cuda:0", "/GPU:0"], ["", "cuda 0"]),
    "modes": (
        ["default", "custom,numeric", ",".join(MODES)],
        ["", "bogus", "default,bogus"],
    ),
    "timeout": (
        [f"{T_LO:g}", f"{T_HI:g}", "0.5", "5000", "120"],
        ["0", "0.001", "-1", f"{T_HI + 1:g}", "nan", "inf", "x"],
    ),
    "depth": ([str(D_LO), str(D_HI), "4"], [str(D_LO - 1), str(D_HI + 1), "x"]),
    "checks": (["none", "all", "vmap", "vmap,compiled"], ["bogus", "vmap,bogus"]),
    "range": (["-3,3", "-6,6", "0,1"], ["3,-3", "1,1", "a,b", "nan,1", "1", ""]),
}
CASES = [
    (f, t, ok)
    for f, (yes, no) in EDGES.items()
    for ok, ts in ((True, yes), (False, no))
    for t in ts
]


def test_every_run_settings_field_has_a_rule_and_edges():
    assert {attr for attr, _ in RUN_FIELDS.values()} == {f.name for f in fields(RunSettings)}
    assert set(EDGES) == set(RUN_FIELDS)


def cli(field: str, text: str) -> RunSettings | None:
    try:
        return settings_from(_run_parser().parse_args(["x.py", f"--{field}={text}"]))
    except UsageError as exc:
        assert f"--{field}" in str(exc)  # the message names the flag
        return None


def plugin(field: str, text: str) -> RunSettings | None:
    kw = {"range": "input_range"}.get(field, field)
    value = tuple(text.split(",")) if field in ("range", "modes") else text
    try:
        return settings_for(**{kw: value})
    except SettingsError as exc:
        assert list(exc.problems) == [field]
        return None


@pytest.mark.parametrize("field,text,ok", CASES)
def test_the_cli_and_the_plugin_take_and_refuse_alike(field, text, ok):
    got = cli(field, text)
    assert (got is not None) == ok, (field, text)
    mine = plugin(field, text)
    assert (mine is not None) == ok, (field, text)
    if ok and field != "upstream":  # the plugin's default upstream is random, the CLI's ones
        assert mine == got.with_(upstream="random")


def _panel(qtbot, path):
    from gradviz.app.settings_file import SettingsFile
    from gradviz.qt.settings_panel import SettingsPanel

    panel = SettingsPanel(SettingsFile(str(path)), frameworks=("torch", "tf"))
    qtbot.addWidget(panel)
    panel.show()
    return panel


def _type(qtbot, box, text: str) -> None:
    """Select a spin box's number and type `text` over it, as a user does, then leave it."""
    from PySide6.QtCore import Qt

    box.setFocus()
    box.selectAll()
    qtbot.keyClick(box, Qt.Key.Key_Delete)
    qtbot.keyClicks(box, text)
    box.interpretText()


def enter(qtbot, panel, field: str, text: str) -> bool:
    """Put `text` into the panel's field for `field` the way its widget takes input; False
    where the widget itself has no way to hold it (no such choice, typing refused)."""
    if field in ("graph", "dtype"):
        box = getattr(panel, field)
        i = box.findText(text)
        box.setCurrentIndex(i)
        return i >= 0
    if field in ("shape", "range"):
        getattr(panel, field).setText(text)
        return True
    if field == "upstream":
        panel.upstream.setCurrentText(text)
        return True
    if field in ("seed", "timeout", "depth"):
        if field == "depth":
            panel.graph.setCurrentIndex(panel.graph.findData("stack"))  # depth is the stack's
        box = getattr(panel, field)
        _type(qtbot, box, text)
        try:
            return box.value() == float(text)  # the box holds what was typed, not a clamp
        except ValueError:
            return False
    if field in ("modes", "checks"):
        boxes = getattr(panel, field)
        names = {"all": list(CHECKS), "none": []}.get(text, [n for n in text.split(",") if n])
        for name, cb in boxes.items():
            cb.setChecked(name in names)
        return all(n in boxes for n in names)
    raise AssertionError(f"no way to enter {field}")


@pytest.mark.parametrize("field,text,ok", [c for c in CASES if c[0] != "device"])
def test_the_panel_takes_what_the_cli_takes_and_refuses_what_it_refuses(
    qtbot, tmp_path, field, text, ok
):
    pytest.importorskip("pytestqt")
    panel = _panel(qtbot, tmp_path / "gradviz.ini")
    assert panel.validate() == ""
    held = enter(qtbot, panel, field, text)
    got = panel.settings("torch") if held and panel.validate() == "" else None
    want = cli(field, text)
    assert (got is not None) == ok, (field, text, panel.validate())
    if ok:  # and to the same value (the CLI's other fields are the defaults too)
        assert got == (want.with_(graph="stack") if field == "depth" else want)


@pytest.mark.parametrize("field,text,ok", CASES)
def test_the_settings_file_and_the_panel_take_and_refuse_alike(qtbot, tmp_path, field, text, ok):
    """A value written in the settings file reaches the panel when the CLI would take it, and
    is named as a fallback (the default used) or shown as the panel's problem otherwise."""
    pytest.importorskip("pytestqt")
    path = tmp_path / "gradviz.ini"
    key = "run/device/torch" if field == "device" else f"run/{field}"
    path.write_text(f"{key} = {text}\n" + ("run/graph = stack\n" if field == "depth" else ""))
    panel = _panel(qtbot, path)
    refused = panel.qs.fallbacks + panel.fallbacks
    taken = not refused and panel.validate() == ""
    assert taken == ok, (field, text, refused, panel.validate())
    if ok:
        want = cli(field, text)
        assert panel.settings("torch") == (want.with_(graph="stack") if field == "depth" else want)


def test_the_spin_boxes_ranges_are_the_schemas(qtbot, tmp_path):
    pytest.importorskip("pytestqt")
    panel = _panel(qtbot, tmp_path / "gradviz.ini")
    assert (panel.seed.minimum(), panel.seed.maximum()) == SEED_RANGE
    assert (panel.timeout.minimum(), panel.timeout.maximum()) == TIMEOUT_RANGE
    assert (panel.depth.minimum(), panel.depth.maximum()) == DEPTH_RANGE
    panel.seed.setValue(SEED_HI)
    panel.save()  # and the largest seed is written as the integer it is
    assert "run/seed = 4294967295" in (tmp_path / "gradviz.ini").read_text()


def test_every_problem_is_named_at_once_by_its_field():
    with pytest.raises(SettingsError) as caught:
        run_settings({"seed": -1, "timeout": "nan", "shape": "0", "modes": ""})
    assert list(caught.value.problems) == ["shape", "seed", "modes", "timeout"]  # fields' order
    assert all(m.startswith(f) for f, m in caught.value.problems.items())
