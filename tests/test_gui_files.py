"""The op list as a TensorBoard user expects it: drop files and folders, filter many ops, remove
a file, see which results are stale after a settings change, reset the settings to defaults."""

import pytest
from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from gradviz.app.op_files import op_files
from gradviz.model import MODES, RunSettings

OP_SRC = """
import torch

class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0
"""


def _project(tmp_path):
    root = tmp_path / "project"
    (root / "ops").mkdir(parents=True)
    (root / "ops" / "scale_a.py").write_text(OP_SRC.format(name="ScaleA"))
    (root / "ops" / "scale_b.py").write_text(OP_SRC.format(name="ScaleB"))
    venv = root / ".venv" / "lib"
    venv.mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (venv / "not_mine.py").write_text(OP_SRC.format(name="NotMine"))
    env = root / "env"
    (env / "lib").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr\n")
    (env / "lib" / "installed.py").write_text(OP_SRC.format(name="Installed"))
    (root / "ops" / "__pycache__").mkdir()
    (root / "ops" / "__pycache__" / "cached.py").write_text("x = 1\n")
    (root / "README.txt").write_text("not python\n")
    return root


def test_a_folder_is_its_own_py_files_without_venvs_and_caches(tmp_path):
    root = _project(tmp_path)
    files, note = op_files([str(root)])
    assert files == [str(root / "ops" / "scale_a.py"), str(root / "ops" / "scale_b.py")]
    assert note == ""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert op_files([str(empty), str(root / "README.txt")]) == ([], f"no .py files in {empty}")


@pytest.fixture
def window(make_window, settings):
    return make_window(), settings


def _drop(qtbot, win, paths):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    drop = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        win.dropEvent(drop)


def test_drop_a_folder_filter_and_remove_a_file(qtbot, window, tmp_path):
    win, _qs = window
    root = _project(tmp_path)
    a, b = str(root / "ops" / "scale_a.py"), str(root / "ops" / "scale_b.py")
    _drop(qtbot, win, [root])
    assert win.state.loaded.files == [a, b]
    assert set(win.state.loaded.ops) == {("torch", a, "ScaleA"), ("torch", b, "ScaleB")}
    assert sorted(win.tree.visible_keys()) == sorted(win.state.loaded.ops)

    # the filter box: by op name (any case), then by file name
    qtbot.keyClicks(win.op_filter, "scaleb")
    assert win.tree.visible_keys() == [("torch", b, "ScaleB")]
    win.op_filter.clear()
    qtbot.keyClicks(win.op_filter, "scale_a.py")
    assert win.tree.visible_keys() == [("torch", a, "ScaleA")]
    win.op_filter.clear()
    assert len(win.tree.visible_keys()) == 2

    # remove a file: its ops, results and watch go; the other stays
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run()
    win.remove_file(a)
    assert win.state.loaded.files == [b]
    assert list(win.state.loaded.ops) == [("torch", b, "ScaleB")]
    assert ("torch", a, "ScaleA") not in win.state.results
    assert win.tree.visible_keys() == [("torch", b, "ScaleB")]
    assert win.watcher.watched() == [b]


def test_stale_mark_after_a_settings_change_and_reset_to_defaults(
    qtbot, window, tmp_path, write_module
):
    win, qs = window
    path = write_module("scale.py", OP_SRC.format(name="Scale"))
    _drop(qtbot, win, [path])
    key = ("torch", path, "Scale")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run([key])
    win.tree.select_pair("Scale")
    glyph, _color, tip = win.tree.shown_mark(key)
    assert glyph == "✓" and "stale" not in tip and "stale" not in win.pair_label.text()
    panel = win.settings_panel
    panel.shape.setText("300")  # a user edits the shape: the run is stale
    glyph, _color, tip = win.tree.shown_mark(key)
    assert glyph == "✓*" and "stale" in tip and "stale" in win.pair_label.text()
    panel.shape.setText("200")  # back as it ran: not stale any more
    assert win.tree.shown_mark(key)[0] == "✓"
    # settings that do not change a finished result: the timeout, the depth of another graph
    panel.timeout.setValue(panel.timeout.value() / 2)
    panel.depth.setValue(panel.depth.value() + 2)
    assert win.tree.shown_mark(key)[0] == "✓" and "stale" not in win.pair_label.text()
    panel.graph.setCurrentIndex(panel.graph.findText("stack"))  # the depth matters now
    assert win.tree.shown_mark(key)[0] == "✓*"
    panel.graph.setCurrentIndex(panel.graph.findText("op"))
    assert win.tree.shown_mark(key)[0] == "✓"
    panel.shape.setText("300")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run([key])
    assert win.tree.shown_mark(key)[0] == "✓" and "stale" not in win.pair_label.text()

    # choices that persist across launches unnoticed, then Run > Reset settings to defaults
    panel.dtype.setCurrentText("float64")
    panel.upstream.setCurrentText("random")
    panel.modes["numeric"].setChecked(False)
    panel.seed.setValue(7)
    qs.setValue("run/watch", "false")
    win.act_reset_settings.trigger()
    defaults = RunSettings()
    got = panel.settings("torch")
    assert (got.shape, got.dtype, got.upstream, got.seed, got.modes, got.timeout) == (
        defaults.shape,
        defaults.dtype,
        defaults.upstream,
        defaults.seed,
        MODES,
        defaults.timeout,
    )
    assert str(qs.value("run/dtype")) == "float32"  # saved: the next launch starts from them
    assert qs.value("run/watch") is False  # a menu's choice, not a run setting
    assert win.tree.shown_mark(key)[0] == "✓*"  # the last run used shape 300


def _file_menu_pick(qtbot, win, path, text):
    """Right-click the file's line in the op tree and pick `text` in the menu that opens."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMenu

    tree = win.tree
    item = next(
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).toolTip(0) == path
    )
    seen = []

    def pick():
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(20, pick)
            return
        seen.extend(a.text() for a in menu.actions())
        next(a for a in menu.actions() if a.text() == text).trigger()
        menu.close()

    QTimer.singleShot(0, pick)
    tree.customContextMenuRequested.emit(tree.visualItemRect(item).center())
    return seen


def test_a_files_menu_runs_its_ops_and_removes_it(qtbot, window, tmp_path):
    win, _qs = window
    root = _project(tmp_path)
    a, b = str(root / "ops" / "scale_a.py"), str(root / "ops" / "scale_b.py")
    _drop(qtbot, win, [root])
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        seen = _file_menu_pick(qtbot, win, a, "Run this file's ops")
    assert seen == ["Run this file's ops", "Remove from the list"]
    assert [r.request.qualname for r in done.args[0]] == ["ScaleA"]
    assert ("torch", a, "ScaleA") in win.state.results and (
        "torch",
        b,
        "ScaleB",
    ) not in win.state.results
    assert win.summary.text() == "1 op run — 2 tensors: 2 match"
    _file_menu_pick(qtbot, win, a, "Remove from the list")
    assert win.state.loaded.files == [b] and win.tree.visible_keys() == [("torch", b, "ScaleB")]
    assert ("torch", a, "ScaleA") not in win.state.results


def test_files_dropped_under_a_filter_say_what_it_hides(qtbot, window, tmp_path, write_module):
    win, _qs = window
    a = write_module("scale_a.py", OP_SRC.format(name="ScaleA"))
    _drop(qtbot, win, [a])
    qtbot.keyClicks(win.op_filter, "scale_a")
    b = write_module("scale_b.py", OP_SRC.format(name="ScaleB"))
    _drop(qtbot, win, [b])
    assert win.tree.visible_keys() == [("torch", a, "ScaleA")]
    assert (
        win.summary.text()
        == "2 file(s), 2 op(s) — the filter 'scale_a' hides 1 (Esc in it clears it)"
    )
    qtbot.keyClick(win.op_filter, Qt.Key_Escape)
    assert len(win.tree.visible_keys()) == 2
