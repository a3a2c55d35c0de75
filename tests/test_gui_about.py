"""Help ▸ About and the window icon, on the real window over the shared warm Engine."""

import sys
from importlib.metadata import PackageNotFoundError, version

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QMessageBox  # noqa: E402

import gradviz  # noqa: E402
from gradviz.app.settings_file import SettingsFile  # noqa: E402
from gradviz.qt.main_window import MainWindow  # noqa: E402

pytestmark = pytest.mark.gui


def _installed(*distributions: str) -> str:
    """A distribution's version from its metadata: no import of the framework here."""
    for d in distributions:
        try:
            return version(d)
        except PackageNotFoundError:
            pass
    raise AssertionError(f"none of {distributions} is installed")


def _open_about(win) -> QMessageBox:
    [action] = [a for a in win.menuBar().actions() if a.text() == "&Help"]
    [about] = [a for a in action.menu().actions() if a.text() == "About gradviz"]
    about.trigger()
    return win.findChild(QMessageBox, "aboutBox")


def test_about_names_gradviz_qt_and_the_workers_framework_versions(qtbot, engine, tmp_path):
    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import qVersion

    for w in engine.workers.values():
        w.wait_ready(120)
    win = MainWindow([], engine=engine, qsettings=SettingsFile(str(tmp_path / "s.ini")))
    qtbot.addWidget(win)
    win.show()
    assert not win.windowIcon().isNull()
    assert win.windowIcon().availableSizes() or not win.windowIcon().pixmap(64, 64).isNull()

    win.start(run=False)
    loaded_before = set(sys.modules)
    box = _open_about(win)
    lines = box.text().splitlines()
    assert lines[0] == f"gradviz {gradviz.__version__}"
    assert f"PyTorch {_installed('torch')}" in lines
    assert f"TensorFlow {_installed('tensorflow', 'tensorflow-cpu')}" in lines
    assert f"Qt {qVersion()} (PySide6 {pyside_version})" in lines
    assert not box.iconPixmap().isNull()
    box.accept()
    # the versions came from the workers: About imported no framework in the GUI process
    assert not {"torch", "tensorflow", "jax"} & (set(sys.modules) - loaded_before)


def test_about_says_why_a_framework_has_no_version():
    from gradviz.engine.worker import WorkerState
    from gradviz.qt.about import about_text

    states = {
        "torch": WorkerState("torch", "starting"),
        "tf": WorkerState("tf", "failed", detail="ModuleNotFoundError: tensorflow"),
    }
    lines = about_text(("torch", "tf"), states).splitlines()
    assert "PyTorch: loading…" in lines
    assert "TensorFlow: not available (ModuleNotFoundError: tensorflow)" in lines
    assert "PyTorch: not started" in about_text(("torch",), {}).splitlines()
