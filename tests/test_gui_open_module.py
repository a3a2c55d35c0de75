"""The app opens ops inside packages: File ▸ Open module… by dotted name, and a dropped package
file; both load through the package and run (real window offscreen, the session engine)."""

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402
from op_packages import write_package  # noqa: E402
from PySide6.QtCore import QMimeData, QPointF, Qt, QTimer, QUrl  # noqa: E402
from PySide6.QtGui import QDropEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QInputDialog  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture
def window(make_window):
    return make_window()


def answer_module_dialog(names: list[str], seen: list[str]) -> None:
    """Type each name into the Open module dialog in turn (the dialog is modal: answered from
    the event loop it runs); `seen` gets the dialog's text each time it shows."""

    def answer():
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QInputDialog):
            QTimer.singleShot(20, answer)
            return
        seen.append(dialog.labelText())
        dialog.setTextValue(names.pop(0))
        dialog.accept()
        if names:
            QTimer.singleShot(0, answer)

    QTimer.singleShot(0, answer)


def run_all(qtbot, win):
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as blocker:
        assert win.run()
    return {r.framework: r for r in blocker.args[0]}


def test_open_module_by_name_loads_and_runs_it(qtbot, window, tmp_path, monkeypatch):
    pkg = write_package(tmp_path)
    monkeypatch.chdir(tmp_path)
    seen: list[str] = []
    answer_module_dialog(["qpkg.layers.nothere", "qpkg.layers.quant_torch"], seen)
    with qtbot.waitSignal(window.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        window.act_open_module.trigger()
    assert "no module named 'qpkg.layers.nothere'" in seen[1]  # the dialog said why, stayed open
    op_file = str(pkg / "layers" / "quant_torch.py")
    assert window.state.loaded.files == [op_file]
    assert [k for k in window.state.loaded.ops] == [("torch", op_file, "RoundSTE")]
    res = run_all(qtbot, window)["torch"]
    assert res.status == "ok", res.error
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.ones(200))
    np.testing.assert_array_equal(res.tensor("x").grads["default"], np.zeros(200))
    window.tree.select_pair("pkg_round")
    assert window.numbers.value("x", "torch", "verdict") == "surrogate"


def test_dropped_package_file_loads_and_runs(qtbot, window, tmp_path):
    op_file = write_package(tmp_path, scale=4.0) / "layers" / "quant_tf.py"
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(op_file))])
    drop = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    with qtbot.waitSignal(window.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        window.dropEvent(drop)
    assert window.state.loaded.files == [str(op_file)]
    res = run_all(qtbot, window)["tf"]
    assert res.status == "ok", res.error
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.full(200, 4.0))
