"""The window's start in a fresh process, as `gradviz` makes it (qt/app.py): its first frame is
painted before pyqtgraph is imported and before any worker is spawned, and the run that follows
still draws its plots, on the saved colour scheme's plot background."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("pytestqt")
pytestmark = pytest.mark.gui

SCRIPT = r"""
import json, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget
from gradviz.engine import worker as W
from gradviz.qt import app, main_window

seen = {"starts": 0}
spawn = W.Worker._spawn_if_needed
def counted(self):
    seen["starts"] += 1
    return spawn(self)
W.Worker._spawn_if_needed = counted

class FirstPaint(QObject):
    def __init__(self, win):
        super().__init__(win)
        self.win = win
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint and "paint" not in seen and isinstance(obj, QWidget) \
                and obj.window() is self.win:
            seen["paint"] = {"pyqtgraph": "pyqtgraph" in sys.modules, "starts": seen["starts"]}
        return False

show = main_window.MainWindow.show
def shown(win):
    QApplication.instance().installEventFilter(FirstPaint(win))
    def done(results):
        seen["results"] = [r.status for r in results]
        def drawn():        # the grid draws the run's results after the window's debounce
            if win.grid.plot_count() == 0:
                return
            timer.stop()
            import pyqtgraph as pg
            seen["plots"] = win.grid.plot_count()
            seen["backgrounds"] = sorted({row.canvas.backgroundBrush().color().name()
                                          for row in win.grid.rows.values()})
            seen["default_background"] = pg.mkColor(pg.getConfigOption("background")).name()
            win.close()
            QApplication.instance().exit(0)
        timer = QTimer(win)
        timer.timeout.connect(drawn)
        timer.start(20)
    win.runDone.connect(done)
    show(win)
main_window.MainWindow.show = shown
app.main([sys.argv[1]], run=True)
print("SEEN " + json.dumps(seen))
"""


def test_first_frame_before_pyqtgraph_and_workers_then_plots_on_the_saved_scheme(
    tmp_path, examples_dir
):
    from gradviz.plots.palette import PLOT_SCHEMES

    ini = tmp_path / "settings.ini"
    ini.write_text("[view]\ntheme=dark\n")
    # a crash leaves its Python stack in stderr, which the assertion below shows
    env = dict(
        os.environ, QT_QPA_PLATFORM="offscreen", GRADVIZ_SETTINGS=str(ini), PYTHONFAULTHANDLER="1"
    )
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(examples_dir / "tutorial_torch.py")],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("SEEN ")]
    assert line, proc.stdout[-2000:] + proc.stderr[-2000:]
    seen = json.loads(line[0][5:])
    assert seen["paint"] == {"pyqtgraph": False, "starts": 0}  # no worker asked to start
    assert seen["starts"] >= 1
    assert seen["results"] and set(seen["results"]) == {"ok"}
    assert seen["plots"] > 0
    dark = PLOT_SCHEMES["dark"]["background"]
    assert seen["default_background"] == dark
    assert seen["backgrounds"] == [dark]
