"""Settings are plain values (issue 11, item 3): a pickled `@Variant(...)` value planted in the
settings file would run a command when read; the window starts without reading it, uses the
default, and says so."""
import os

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings  # noqa: E402


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):                       # unpickling it creates the marker file
        return (os.system, (f"touch {self.marker}",))


def test_pickled_setting_is_never_unpickled(qtbot, engine, tmp_path):
    marker = tmp_path / "ran"
    ini = tmp_path / "gradviz.ini"
    qs = QSettings(str(ini), QSettings.IniFormat)
    qs.setValue("run/seed", _Payload(marker))   # PySide writes it as @Variant(...PyObjectWrapper)
    qs.setValue("run/shape", "4x50")
    qs.sync()
    del qs
    assert "@Variant(" in ini.read_text() and not marker.exists()

    from gradviz.qt.main_window import MainWindow
    win = MainWindow([], engine=engine, qsettings=QSettings(str(ini), QSettings.IniFormat))
    qtbot.addWidget(win)
    assert not marker.exists()
    assert win.settings_panel.seed.value() == 0            # the default
    assert win.settings_panel.shape.text() == "4x50"       # plain values are kept
    assert "run/seed" in win.summary.text() and "defaults used" in win.summary.text()
    assert "@Variant(" not in ini.read_text()
    # reading every key left does not run it either
    again = QSettings(str(ini), QSettings.IniFormat)
    for key in again.allKeys():
        again.value(key)
    assert not marker.exists()


def test_unusable_saved_values_fall_back_and_are_named_once(qtbot, engine, tmp_path):
    ini = tmp_path / "gradviz.ini"
    ini.write_text("[run]\nseed=banana\ntimeout=abc\nshape=3x7\n\n[window]\ngeometry=garbage\n")
    from gradviz.qt.main_window import MainWindow
    win = MainWindow([], engine=engine, qsettings=QSettings(str(ini), QSettings.IniFormat))
    qtbot.addWidget(win)
    panel = win.settings_panel
    assert panel.seed.value() == 0 and panel.timeout.value() == 120.0      # the defaults
    assert panel.settings("torch").shape == (3, 7)                          # good values kept
    said = win.summary.text()
    for key in ("run/seed='banana'", "run/timeout='abc'", "window/geometry='garbage'"):
        assert key in said, said
    assert win.log.toPlainText().count("run/seed='banana'") == 1           # said once
