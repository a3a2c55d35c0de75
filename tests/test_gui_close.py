"""Closing the window mid-run: the run is cancelled, every thread the window started is joined
and its own engine's worker process is gone (a window with its own engine, as the app runs)."""

import os
import threading

from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402

from gradviz.app.settings_file import SettingsFile

HANGS_SRC = """
import time
import torch

class Hangs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        time.sleep(3600)
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        return g
"""


def _gone(pid: int) -> bool:
    """No such process, or only its zombie left for a parent that has already let go of it."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _window_threads():
    return [
        t.name
        for t in threading.enumerate()
        if t.name.startswith(
            (
                "gradviz-run",
                "gradviz-load",
                "gradviz-devices",
                "gradviz-analyze",
                "gradviz-gui-parity",
            )
        )
    ]


def test_closing_mid_run_leaves_no_thread_and_no_worker(qtbot, tmp_path, write_module):
    from gradviz.qt.main_window import MainWindow

    path = write_module("hangs.py", HANGS_SRC)
    win = MainWindow([path], qsettings=SettingsFile(str(tmp_path / "g.ini")), frameworks=("torch",))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        win.start()
    key = ("torch", path, "Hangs")
    assert key in win.state.loaded.ops
    assert win.run([key])
    qtbot.waitUntil(lambda: win.state.progress.states.get(key) == "running", timeout=RUN_TIMEOUT_MS)
    worker = win.bridge.engine.workers["torch"]
    qtbot.waitUntil(lambda: worker.pid() != 0, timeout=RUN_TIMEOUT_MS)
    pid = worker.pid()
    assert _window_threads()  # the run task is under way
    win.close()
    assert _window_threads() == []
    assert win.bridge.tasks.live() == []
    assert _gone(pid), f"worker {pid} still running"
    assert not win.bridge.run([])  # closed: nothing new starts
    assert os.path.exists(path)
