"""Settings are plain values that gradviz parses itself (issue 11 item 3, issue 26 item 1): a
pickled `@Variant(...)` value that another process planted in the settings file never runs when
the app starts in a fresh process (QSettings unpickled it there, in `allKeys()` alone); values
out of range fall back to their defaults, named once; the file gradviz writes is its own text."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from gradviz.app.settings_file import SettingsFile  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

PLANT = r"""
import os, sys
from PySide6.QtCore import QSettings

class Payload:
    def __reduce__(self):                   # unpickling it creates the marker file
        return (os.system, ("touch " + sys.argv[2],))

qs = QSettings(sys.argv[1], QSettings.IniFormat)
qs.setValue("run/seed", Payload())          # PySide writes @Variant(...PyObjectWrapper...)
qs.setValue("run/shape", "4x50")
qs.sync()
"""

START = r"""
import json, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from gradviz.qt import app, main_window

seen = {}
show = main_window.MainWindow.show
def shown(win):
    show(win)
    def done():
        p = win.settings_panel
        seen.update(summary=win.summary.text(), log=win.log.toPlainText(), seed=p.seed.value(),
                    shape=p.shape.text(), depth=p.depth.value())
        win.close()
        QApplication.instance().exit(0)
    QTimer.singleShot(0, done)
main_window.MainWindow.show = shown
app.main([])
print("SEEN " + json.dumps(seen))
"""


def _start_app(env) -> dict:
    """`gradviz` started in a fresh process on `env`: what its window showed."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", **env)
    proc = subprocess.run(
        [sys.executable, "-c", START],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("SEEN ")]
    return json.loads(line[5:])


@pytest.mark.parametrize("where", ["GRADVIZ_SETTINGS", "XDG_CONFIG_HOME"])
def test_a_planted_pickle_never_runs_in_a_fresh_app(tmp_path, where):
    marker = tmp_path / "ran"
    if where == "GRADVIZ_SETTINGS":
        conf = tmp_path / "gradviz.ini"
        env = {"GRADVIZ_SETTINGS": str(conf)}
    else:  # the user's own settings, where a plain gradviz looks
        conf = tmp_path / "config" / "gradviz" / "gradviz.conf"
        env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "GRADVIZ_SETTINGS": ""}
    conf.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-c", PLANT, str(conf), str(marker)],
        check=True,
        timeout=120,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
    )
    assert "@Variant(" in conf.read_text() and not marker.exists()

    seen = _start_app(env)
    assert not marker.exists()
    assert seen["seed"] == 0  # the default
    assert seen["shape"] == "4x50"  # the plain value is kept
    assert "run/seed='@Variant(" in seen["summary"] and "defaults used" in seen["summary"]
    assert seen["log"].count("run/seed=") == 1  # named once
    written = conf.read_text()  # closing saved gradviz's own format
    assert "@Variant(" not in written and "run/shape = 4x50\n" in written
    assert "run/seed = 0\n" in written


def test_out_of_range_values_fall_back_instead_of_stopping_the_start(tmp_path):
    conf = tmp_path / "gradviz.ini"
    conf.write_text("[run]\ndepth=99999999999\nseed=-5\ntimeout=inf\nshape=3x7\n")
    seen = _start_app({"GRADVIZ_SETTINGS": str(conf)})
    assert (seen["depth"], seen["seed"], seen["shape"]) == (4, 0, "3x7")
    for said in (
        "run/depth='99999999999' (depth 99999999999: the stack graph takes 1 to 64 layers)",
        "run/seed='-5'",
        "run/timeout='inf'",
    ):
        assert said in seen["summary"], seen["summary"]
        assert seen["log"].count(said) == 1


def test_unusable_saved_values_fall_back_and_are_named_once(qtbot, engine, tmp_path):
    ini = tmp_path / "gradviz.ini"
    ini.write_text("[run]\nseed=banana\ntimeout=abc\nshape=3x7\n\n[window]\ngeometry=garbage\n")
    from gradviz.qt.main_window import MainWindow

    win = MainWindow([], engine=engine, qsettings=SettingsFile(str(ini)))
    qtbot.addWidget(win)
    panel = win.settings_panel
    assert panel.seed.value() == 0 and panel.timeout.value() == 120.0  # the defaults
    assert panel.settings("torch").shape == (3, 7)  # good values kept
    said = win.summary.text()
    for key in ("run/seed='banana'", "run/timeout='abc'", "window/geometry='garbage'"):
        assert key in said, said
    assert win.log.toPlainText().count("run/seed='banana'") == 1  # said once


def test_values_read_back_as_written(tmp_path):
    path = tmp_path / "s.conf"
    qs = SettingsFile(str(path))
    paths = ["/tmp/a b.py", "/tmp/tab\there.py", "/tmp/new\nline.py", " lead.py", 'q"uote.py ']
    qs.setValue("files/open", paths)
    qs.setValue("run/seed", 7)
    qs.setValue("run/timeout", 2.5)
    qs.setValue("view/log_scale", True)
    qs.setValue("window/geometry", b"\x00\x01\xff")
    qs.setValue("run/shape", "4x0")  # refused as the panel would: the old value stays
    qs.setValue("run/depth", 10**9)
    qs.setValue("no/such/key", "x")
    again = SettingsFile(str(path))
    assert again.fallbacks == []
    assert again.value("files/open") == paths
    assert (again.value("run/seed"), again.value("run/timeout")) == (7, 2.5)
    assert again.value("view/log_scale") is True
    assert again.value("window/geometry") == b"\x00\x01\xff"
    assert again.value("run/shape") == "200" and not again.contains("run/shape")
    assert again.value("run/depth") == 4 and not again.contains("no/such/key")
    assert os.stat(path).st_mode & 0o777 == 0o600
    again.setValue("files/open", [])  # an empty list is kept as one, not as absent
    assert SettingsFile(str(path)).contains("files/open")
    assert SettingsFile(str(path)).value("files/open") == []


def test_a_settings_path_that_is_not_a_regular_file_is_not_read(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    qs = SettingsFile(str(fifo))  # would block forever if opened for a read
    assert qs.allKeys() == [] and qs.value("run/seed") == 0
    big = tmp_path / "big.conf"
    big.write_text("run/seed = 3\n" + "# padding\n" * 200_000)
    assert SettingsFile(str(big)).value("run/seed") == 3  # read up to its bound only
