"""Item 14 of issue 11: what a worker prints itself (TensorFlow's absl / oneDNN / CUDA start-up
lines) never reaches the user's terminal; it is kept, shown in the app's log panel and, with
`gradviz run --verbose`, on the terminal."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# TensorFlow's start-up lines: absl's preamble, glog-style "I0000 ... file.cc:N]" lines, oneDNN,
# CUDA factory registration.
TF_NOISE = re.compile(
    r"absl::|^[IWEF]\d{4} .*\.cc:\d+\]|oneDNN|cuda|cpu_feature_guard", re.M | re.I
)


def gradviz_run(*args, env_extra=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    env.update(env_extra or {})
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "gradviz",
            "run",
            "--framework",
            "tf",
            "--op",
            "round_ste",
            "--modes",
            "default,custom",
            "--quiet",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )


def test_tf_start_up_lines_stay_off_the_terminal_unless_verbose():
    # The most talkative level TensorFlow has: whatever it says at start-up is said here.
    loud = gradviz_run(env_extra={"TF_CPP_MIN_LOG_LEVEL": "0"})
    assert loud.returncode == 0, loud.stderr
    assert "round_ste" in loud.stdout
    assert not TF_NOISE.search(loud.stderr), loud.stderr
    assert not TF_NOISE.search(loud.stdout), loud.stdout
    assert "[tf worker]" not in loud.stderr

    # --verbose shows them (informational ones too, TF_CPP_MIN_LOG_LEVEL unset), marked as the
    # worker's; the run itself is the same.
    verbose = gradviz_run("--verbose")
    assert verbose.returncode == 0, verbose.stderr
    worker_lines = [ln for ln in verbose.stderr.splitlines() if ln.startswith("[tf worker] ")]
    assert worker_lines, verbose.stderr
    assert TF_NOISE.search("\n".join(ln[len("[tf worker] ") :] for ln in worker_lines))
    assert verbose.stdout == loud.stdout


def test_worker_output_is_kept_and_shown_in_the_log_panel(qtbot, engine, write_module):
    """A line a worker writes outside the user's call (here: a thread the op left behind) goes to
    the worker's pipe, is kept, and shows in the app's log panel."""
    path = write_module(
        "late_torch.py",
        """
        import os, threading, time
        import torch

        def _late():
            time.sleep(0.3)
            os.write(2, b"written after the call\\n")

        class Late(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                threading.Thread(target=_late, daemon=True).start()
                return x * 3.0

            @staticmethod
            def backward(ctx, g):
                return g * 3.0
    """,
    )
    pytest.importorskip("pytestqt")
    from gradviz.app.settings_file import SettingsFile
    from gradviz.qt.main_window import MainWindow

    qs = SettingsFile(str(Path(path).parent / "gradviz.ini"))
    qs.setValue("run/modes", "custom")
    win = MainWindow([path], engine=engine, qsettings=qs)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        win.start(run=False)
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run(list(win.state.loaded.ops))
    assert [r.status for r in done.args[0]] == ["ok"]
    # the log panel shows it, marked as the worker's; the worker keeps it
    qtbot.waitUntil(
        lambda: "[torch worker] written after the call" in win.log.toPlainText(), timeout=30_000
    )
    assert "written after the call" in engine.workers["torch"].output.lines
