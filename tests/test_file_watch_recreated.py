"""A watched op file deleted and made again later is reloaded (issue 26, minor): its path left
QFileSystemWatcher with the delete, and nothing watched for it to come back."""

import pytest

pytest.importorskip("pytestqt")


def test_a_deleted_file_made_again_is_reported_changed(qtbot, tmp_path):
    from gradviz.qt.file_watcher import FileWatcher

    path = tmp_path / "ops.py"
    path.write_text("A = 1\n")
    watcher = FileWatcher(debounce_ms=50)
    watcher.watch([str(path)])
    with qtbot.waitSignal(watcher.filesChanged, timeout=20_000) as gone:
        path.unlink()
    assert gone.args == [[str(path)]]
    with qtbot.waitSignal(watcher.filesChanged, timeout=20_000) as back:
        path.write_text("A = 2\n")
    assert back.args == [[str(path)]]
    with qtbot.waitSignal(watcher.filesChanged, timeout=20_000) as edited:  # watched again
        path.write_text("A = 3\n")
    assert edited.args == [[str(path)]]
