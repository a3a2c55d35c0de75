"""The run settings' defaults are written once, as RunSettings' (issue 27 item 5): the CLI's flags,
the settings schema and a fresh settings panel all come to RunSettings(); and the window refuses
the values the CLI refuses, with the same parsers."""

import pytest

from gradviz.app.settings_schema import SCHEMA, parse
from gradviz.cli.commands import UsageError, _run_parser, joined_range, settings_from
from gradviz.model import RunSettings, parse_checks, parse_range, parse_shape, settings_texts

# a value of each run setting that is not its default: a default that drifts in one place shows
DIFFERENT = {
    "graph": "stack",
    "shape": "4x50",
    "dtype": "float64",
    "seed": 7,
    "upstream": "random",
    "device": "cpu",
    "modes": "custom",
    "timeout": 30.0,
    "depth": 3,
    "checks": "vmap",
    "range": "-6,6",
}

# what the CLI refuses (exit 2) and the window must refuse too
REFUSED = [
    ("--shape", "0"),
    ("--shape", "a"),
    ("--range", "3,-3"),
    ("--range", "-inf,3"),
    ("--upstream", "const:inf"),
    ("--upstream", "zeros"),
    ("--modes", ""),
]


def cli_settings(*argv: str) -> RunSettings:
    return settings_from(_run_parser().parse_args(joined_range(["x.py", *argv])))


def test_the_cli_flags_default_to_run_settings():
    assert cli_settings() == RunSettings()


def test_the_schema_defaults_are_run_settings_written_out():
    d = RunSettings()
    assert {k: SCHEMA[f"run/{k}"].default for k in DIFFERENT if k != "device"} == {
        k: v for k, v in settings_texts(d).items() if k != "device"
    }
    assert SCHEMA["run/device/torch"].default == SCHEMA["run/device/tf"].default == d.device
    # and they read back as RunSettings' values
    assert parse_shape(SCHEMA["run/shape"].default) == d.shape
    assert parse_range(SCHEMA["run/range"].default) == d.input_range
    assert parse_checks(SCHEMA["run/checks"].default) == d.checks
    assert tuple(SCHEMA["run/modes"].default.split(",")) == d.modes
    for key, spec in SCHEMA.items():  # every default is a value the schema itself takes
        if spec.default is not None and spec.kind not in ("bytes", "list"):
            parse(key, str(spec.default).lower() if spec.kind == "bool" else str(spec.default))


def test_settings_texts_round_trip_through_the_cli():
    flags = [a for k, v in DIFFERENT.items() for a in (f"--{k}", str(v))]
    got = cli_settings(*flags)
    assert got != RunSettings()
    assert settings_texts(got) == {k: v for k, v in DIFFERENT.items()}
    assert (
        cli_settings(
            *[a for k, v in settings_texts(got).items() for a in (f"--{k}", str(v) or "none")]
        )
        == got
    )


def test_a_fresh_settings_panel_is_run_settings(qtbot, tmp_path):
    pytest.importorskip("pytestqt")
    from gradviz.app.settings_file import SettingsFile
    from gradviz.qt.settings_panel import SettingsPanel

    panel = SettingsPanel(SettingsFile(str(tmp_path / "gradviz.ini")))
    qtbot.addWidget(panel)
    assert panel.settings("torch") == RunSettings()


@pytest.mark.parametrize("flag,value", REFUSED)
def test_the_window_refuses_what_the_cli_refuses(qtbot, tmp_path, flag, value):
    with pytest.raises(UsageError):
        cli_settings(flag, value)
    from gradviz.app.settings_file import SettingsFile
    from gradviz.qt.settings_panel import SettingsPanel

    panel = SettingsPanel(SettingsFile(str(tmp_path / "gradviz.ini")))
    qtbot.addWidget(panel)
    assert panel.validate() == ""
    if flag == "--modes":
        for cb in panel.modes.values():
            cb.setChecked(False)
    else:
        field = {"--shape": panel.shape, "--range": panel.range}.get(flag)
        if field is not None:
            field.setText(value)
        else:
            panel.upstream.setCurrentText(value)
    assert panel.validate() != ""
    with pytest.raises(ValueError):  # nor does the settings file take it
        if flag != "--modes":
            parse(f"run/{flag[2:]}", value)
        else:
            parse("run/modes", value)


def test_gradviz_testing_defaults_are_run_settings_but_the_upstream():
    from gradviz.testing.run import settings_for

    assert settings_for() == RunSettings(upstream="random")
