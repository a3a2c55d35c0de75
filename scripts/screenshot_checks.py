"""docs/checks_matrix.png: the window's Checks tab after a run of the checks corpus with every
check. `xvfb-run -a python scripts/screenshot_checks.py [PNG]` (or QT_QPA_PLATFORM=offscreen)."""

from __future__ import annotations

import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
CORPUS = os.path.join(ROOT, "tests", "corpus", "checks")
SHOWN = {
    "torch": (
        "Cube",
        "CubeOnce",
        "CubeDetached",
        "ViewBack",
        "InplaceBack",
        "OldStyle",
        "NoVmapRule",
        "LinearMixed",
        "LinearAmp",
        "SquareCancel",
        "SquareWrong",
    ),
    "tf": (
        "square",
        "square_numpy",
        "square_stopped",
        "square_f32const",
        "square_cancel",
        "square_wrong",
    ),
}


def main(png: str) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from gradviz.app.settings_file import SettingsFile
    from gradviz.model import CHECKS
    from gradviz.qt.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    tmp = tempfile.mkdtemp(prefix="gradviz-shot-")
    qs = SettingsFile(os.path.join(tmp, "gradviz.ini"))
    qs.setValue("run/checks", ",".join(CHECKS))
    qs.setValue("run/modes", "default,custom,numeric")
    files = [os.path.join(CORPUS, f) for f in ("torch_ops.py", "tf_ops.py")]
    win = MainWindow(files, qsettings=qs)
    win.resize(1500, 1000)
    win.show()
    code = {"rc": 3}

    def run(*_):
        keys = [k for k in win.state.loaded.ops if k[2] in SHOWN.get(k[0], ())]
        win.run(keys)

    def shoot(*_):
        win.tabs.setCurrentWidget(win.checks_matrix)
        win.tabs.parent().setSizes([330, 670])
        win.tree.select_pair("CubeOnce")
        win.checks_matrix.choose(("torch", files[0], "CubeOnce"), "double_backward")

        def grab():
            code["rc"] = 0 if win.save_screenshot(png) else 3
            win.close()
            app.exit(code["rc"])

        QTimer.singleShot(800, grab)

    win.catalogsLoaded.connect(run)
    win.runDone.connect(shoot)
    QTimer.singleShot(0, lambda: win.start(run=False))
    app.exec()
    return code["rc"]


if __name__ == "__main__":
    sys.exit(
        main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "checks_matrix.png"))
    )
