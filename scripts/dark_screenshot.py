"""Take docs/dark_mode.png: the window in View > Theme: dark after running the built-in examples,
showing round_ste (its TF default has no gradient: notes in cells, mixed verdicts) with a tab
below. Run under a real X server, e.g.
`HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1600x1000x24" python scripts/dark_screenshot.py
docs/dark_mode.png [--tab Numbers|Diagnostics|Checks|Log] [--pair NAME] [--light]`.
Uses its own settings file (in a private temporary folder, removed after), not the user's."""

import argparse
import os
import shutil
import sys
import tempfile

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from gradviz.app.settings_file import SettingsFile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=os.path.join(ROOT, "docs", "dark_mode.png"))
    ap.add_argument("--tab", default="Diagnostics", help="the tab shown below the grid")
    ap.add_argument("--pair", default="round_ste", help="the op shown in the grid")
    ap.add_argument("--checks", action="store_true", help="run the contract checks too")
    ap.add_argument("--light", action="store_true", help="light instead of dark (to compare)")
    ap.add_argument("--traps", action="store_true", help="open the trap examples too (errors)")
    ap.add_argument("--view", default="values", help="every row in this view (histogram, heatmap…)")
    ap.add_argument(
        "--shape", default="200", help="the run's input shape (heatmaps need 2-D: 20x30)"
    )
    args = ap.parse_args(argv)
    app = QApplication(sys.argv[:1])
    from gradviz.catalog import builtin_examples, trap_examples
    from gradviz.qt.main_window import MainWindow

    folder = tempfile.mkdtemp(prefix="gradviz-shot-")
    try:
        qs = SettingsFile(os.path.join(folder, "settings.ini"))
        qs.setValue("run/modes", "default,custom,numeric")
        qs.setValue("run/shape", args.shape)
        qs.setValue("app/launched", True)  # not a first launch: we run them ourselves
        if args.checks:
            qs.setValue("run/checks", "double_backward,noncontiguous_upstream,autocast,vmap")
        qs.setValue("view/theme", "light" if args.light else "dark")
        files = builtin_examples() + (trap_examples() if args.traps else [])
        win = MainWindow(files, qsettings=qs)
        return _shoot(app, win, args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _shoot(app, win, args) -> int:
    win.resize(1500, 950)
    win.show()
    code = {"exit": 3, "ran": False, "shot": False}

    def loaded():
        if not code["ran"]:
            code["ran"] = True
            win.run()

    def done(_results):
        if code["shot"] or win.bridge.running:
            return
        code["shot"] = True
        win.tree.select_pair(args.pair)
        win.show_pair(args.pair)
        win.set_all_views(args.view)
        tabs = win.tabs
        for i in range(tabs.count()):
            if tabs.tabText(i).startswith(args.tab):
                tabs.setCurrentIndex(i)
        if args.tab.startswith("Diagnostics") and win.diagnostics.list.topLevelItemCount():
            win.diagnostics.list.setCurrentItem(win.diagnostics.list.topLevelItem(0))

        def grab():
            code["exit"] = 0 if win.save_screenshot(args.out) else 3
            win.close()
            app.exit(code["exit"])

        QTimer.singleShot(1500, grab)  # let the last rows paint

    win.catalogsLoaded.connect(loaded)
    win.runDone.connect(done)
    QTimer.singleShot(0, lambda: win.start(run=False))
    QTimer.singleShot(600_000, lambda: app.exit(3))
    app.exec()
    return code["exit"]


if __name__ == "__main__":
    sys.exit(main())
