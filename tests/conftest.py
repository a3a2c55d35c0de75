"""Shared fixtures: one warm Engine (torch + tf workers) for the whole session, offscreen Qt."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "resources" / "examples"
CORPUS = Path(__file__).resolve().parent / "corpus"


def pytest_collection_modifyitems(config, items):
    try:
        import subprocess

        has_gpu = (
            subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=5).returncode == 0
        )
    except (OSError, subprocess.SubprocessError):
        has_gpu = False
    if not has_gpu:
        skip = pytest.mark.skip(reason="no CUDA GPU on this machine")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def engine():
    """A started Engine shared by all tests: workers import torch and tensorflow once."""
    from gradviz.engine import Engine

    eng = Engine()
    for w in eng.workers.values():
        w.wait_ready(120)
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return EXAMPLES


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return CORPUS


@pytest.fixture
def write_module(tmp_path):
    """Write a user op module into a fresh folder and return its path."""

    def write(name: str, source: str) -> str:
        import textwrap

        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return str(path)

    return write


@pytest.fixture
def settings(tmp_path):
    """The window's settings file: an ini file of the test's own; runs default and custom (numeric is
    slower: set "run/modes" where a test needs it)."""
    from gradviz.app.settings_file import SettingsFile

    qs = SettingsFile(str(tmp_path / "gradviz.ini"))
    qs.setValue("run/modes", "default,custom")
    return qs


@pytest.fixture
def make_window(qtbot, engine, settings):
    """make(files, values=None, run=False): the real MainWindow on `files` over the shared
    Engine and `settings` (`values` set in them first, e.g. {"run/modes": "custom"}), shown and
    started; it returns once its files are loaded (at once when it has none). A run still going
    when the test ends is cancelled and waited for."""
    from gui_helpers import RUN_TIMEOUT_MS

    from gradviz.qt.main_window import MainWindow

    made = []

    def make(files=(), values=None, run=False):
        for key, value in (values or {}).items():
            settings.setValue(key, value)
        win = MainWindow(list(files), engine=engine, qsettings=settings)
        qtbot.addWidget(win)
        win.show()
        made.append(win)
        if not files:  # nothing to load: no catalogsLoaded to wait for
            win.start(run=run)
            return win
        with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
            win.start(run=run)
        return win

    yield make
    for w in made:
        if w.bridge.running:
            with qtbot.waitSignal(w.runDone, timeout=RUN_TIMEOUT_MS):
                w.cancel()
