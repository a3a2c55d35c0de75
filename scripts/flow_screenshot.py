"""Take docs/flow.png: the window showing the flow view of a stack run of the clipped sign STE
(tests/corpus/flow/). Run under a display, e.g. `xvfb-run -s "-screen 0 1600x1000x24"
python scripts/flow_screenshot.py docs/flow.png`. Uses its own settings file, not the user's."""

import os
import sys
import tempfile

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from gradviz.app.settings_file import SettingsFile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOW = os.path.join(ROOT, "tests", "corpus", "flow")


def main(out: str) -> int:
    app = QApplication(sys.argv[:1])
    from gradviz.qt.main_window import MainWindow

    folder = tempfile.mkdtemp(prefix="gradviz-shot-")
    qs = SettingsFile(os.path.join(folder, "settings.ini"))
    for key, value in {
        "run/graph": "stack",
        "run/depth": 6,
        "run/shape": "32",
        "run/modes": "default,custom,numeric",
        "run/watch": "false",
    }.items():
        qs.setValue(key, value)
    win = MainWindow(
        [os.path.join(FLOW, "flow_torch.py"), os.path.join(FLOW, "flow_tf.py")], qsettings=qs
    )
    win.resize(1500, 1000)
    win.show()
    code = {"exit": 3, "ran": False, "shot": False}

    def loaded():
        if code["ran"]:
            return
        code["ran"] = True
        keys = [k for k in win.state.loaded.ops if win.state.loaded.pair_name(k) == "sign_ste"]
        win.run(keys)

    def done(_results):
        if code["shot"]:
            return
        code["shot"] = True
        win.tree.select_pair("sign_ste")
        win.show_pair("sign_ste")

        def grab():
            code["exit"] = 0 if win.save_screenshot(out) else 3
            win.close()
            app.exit(code["exit"])

        QTimer.singleShot(800, grab)

    win.catalogsLoaded.connect(loaded)
    win.runDone.connect(done)
    QTimer.singleShot(0, lambda: win.start(run=False))
    app.exec()
    return code["exit"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "flow.png")))
