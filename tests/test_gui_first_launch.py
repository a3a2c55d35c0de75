"""The first `gradviz` without files runs the built-in examples at once; later launches do not."""

from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402

from gradviz.app.settings_file import SettingsFile
from gradviz.catalog import builtin_examples
from gradviz.qt.app import open_window


def launch(qtbot, engine, ini, files=()):
    """One launch as `gradviz [FILES]` makes it, on a real window: the window once its files are
    loaded, and whether a run over them started by itself."""
    win, run = open_window(files, run=False, engine=engine, qsettings=SettingsFile(str(ini)))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        win.start(run=run)
    # the catalogs handler (window_files.py) asks for the run right after catalogsLoaded, before the event loop resumes
    return win, win.bridge.running


def stop(qtbot, win):
    if win.bridge.running:
        with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
            win.cancel()
    win.close()


def test_first_launch_runs_examples_once(qtbot, engine, tmp_path):
    ini = tmp_path / "fresh.ini"  # no saved settings: the very first launch
    win, started = launch(qtbot, engine, ini)
    assert started
    loaded = win.state.loaded
    assert sorted(loaded.files) == sorted(builtin_examples()) and loaded.ops
    # every built-in op is in that run, as `gradviz --run` would ask
    assert set(win.state.progress.keys) == set(loaded.ops) == set(loaded.checked_keys())
    assert "first launch" in win.log.toPlainText()
    stop(qtbot, win)

    win, started = launch(qtbot, engine, ini)  # the second launch waits for Run
    assert not started
    assert "first launch" not in win.log.toPlainText()
    stop(qtbot, win)


def test_files_given_never_count_as_first_launch(qtbot, engine, tmp_path, examples_dir):
    win, started = launch(
        qtbot, engine, tmp_path / "fresh.ini", [str(examples_dir / "tutorial_torch.py")]
    )
    assert not started
    stop(qtbot, win)
