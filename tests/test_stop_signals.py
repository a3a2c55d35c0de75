"""Every way gradviz is asked to stop cleans up as Ctrl+C does (issue 26, item 6): SIGTERM and
SIGHUP (what `timeout`, CI cancellation and a closed terminal send) left the scratch folders in
/dev/shm and a hidden partial `.tmp` report beside the target, Ctrl+C in the app printed a
traceback and the window stayed, and after a SIGKILL of gradviz its folders stayed until the
next start. Each test starts gradviz in a process of its own and waits for the event it
asserts (a marker file the op writes, the window's first load), never for a fixed time."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradviz.engine import scratch

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONFAULTHANDLER="1")

SLOW = """
import os, time
import torch

class Slow(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with open({marker!r} + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace({marker!r} + ".tmp", {marker!r})
        time.sleep(600)
        return x

    @staticmethod
    def backward(ctx, g):
        return g
"""


def _ours(pid: int) -> list[str]:
    """What the gradviz of `pid` has in the scratch root."""
    return [n for n in os.listdir(scratch.ROOT) if re.match(rf"gradviz-{pid}-", n)]


def _until(condition, what: str, limit_s: float = 120.0):
    """Wait for `condition()` to hold (a bound only against a hang, not a timing)."""
    end = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < end, f"never happened: {what}"
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _start_slow_run(tmp_path, *extra):
    marker = tmp_path / "started"
    op = tmp_path / "slow.py"
    op.write_text(SLOW.format(marker=str(marker)))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gradviz",
            "run",
            str(op),
            "--framework",
            "torch",
            "--modes",
            "custom",
            *extra,
        ],
        cwd=ROOT,
        env=ENV,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _until(lambda: marker.exists() or proc.poll() is not None, "the op started")
    assert proc.poll() is None, proc.communicate()
    return proc, int(marker.read_text())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_the_command_line_cleans_up_on_every_stop_signal(tmp_path, sig):
    proc, worker = _start_slow_run(tmp_path, "--json", str(tmp_path / "out.json"))
    assert _ours(proc.pid)  # its scratch folders, while it runs
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, err[-2000:]
    assert "Traceback" not in err
    assert (
        "interrupted" if sig == signal.SIGINT else f"stopped by {signal.Signals(sig).name}"
    ) in err
    assert not _alive(worker)
    assert _ours(proc.pid) == []
    assert sorted(os.listdir(tmp_path)) == ["slow.py", "started"]  # no report, no temp file


def _children(pid: int) -> list[int]:
    found = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            found += [int(p) for p in f.read().split()]
    return found


def test_after_a_sigkill_nothing_of_gradviz_stays_in_dev_shm(tmp_path):
    proc, worker = _start_slow_run(tmp_path)
    assert _ours(proc.pid)
    children = _children(proc.pid)  # the worker, and what cleans up after gradviz
    assert worker in children
    proc.kill()
    proc.wait()
    _until(lambda: not any(_alive(c) for c in children), "gradviz's processes ended")
    # at once, not when the next gradviz starts (another one's sweep would remove them later)
    assert _ours(proc.pid) == []


WRITE_AND_WAIT = r"""
import sys, time
from gradviz.atomic_file import atomic_path
from gradviz.cli import commands

def devices(argv):                      # a report being written when the signal comes
    with atomic_path(sys.argv[1]) as tmp:
        with open(tmp, "w") as f:
            f.write("partial")
        print("WRITING", flush=True)
        time.sleep(600)
    return 0
commands.cmd_devices = devices
sys.exit(commands.main(["devices"]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_report_cut_short_by_a_signal_leaves_no_temp_file(tmp_path, sig):
    target = tmp_path / "report.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITE_AND_WAIT, str(target)],
        cwd=ROOT,
        env=ENV,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.readline() == "WRITING\n"
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    assert os.listdir(tmp_path) == []


APP = r"""
import sys
from gradviz.qt import app, main_window

show = main_window.MainWindow.show
def shown(win):
    win.catalogsLoaded.connect(lambda: print("LOADED", flush=True))
    show(win)
main_window.MainWindow.show = shown
sys.exit(app.main([sys.argv[1]]))
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_app_closes_its_window_on_a_stop_signal(tmp_path, examples_dir, sig):
    conf = tmp_path / "gradviz.conf"
    conf.write_text("run/modes = custom\n")  # not a first launch: nothing runs by itself
    proc = subprocess.Popen(
        [sys.executable, "-c", APP, str(examples_dir / "tutorial_torch.py")],
        cwd=ROOT,
        env=dict(ENV, GRADVIZ_SETTINGS=str(conf)),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.readline() == "LOADED\n", proc.communicate()
    assert _ours(proc.pid)  # its workers' folders
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, err[-2000:]
    assert "Traceback" not in err
    assert _ours(proc.pid) == []
    assert "run/modes = custom\n" in conf.read_text()  # closed as its close button does


def test_no_room_for_scratch_folders_is_said_in_words(tmp_path, capsys, monkeypatch):
    """/dev/shm out of inodes gave a traceback (issue 26, minor): now exit 3 and a sentence."""
    from gradviz.cli import main

    full = tmp_path / "full"  # a root where no folder can be made, even by root
    monkeypatch.setattr(scratch, "ROOT", str(full / "missing"))
    op = tmp_path / "ops.py"
    op.write_text(SLOW.format(marker=str(tmp_path / "m")))
    assert main(["list", str(op), "--framework", "torch"]) == 3
    err = capsys.readouterr().err
    assert f"cannot make a scratch folder for the workers in {full / 'missing'}" in err
    assert "Traceback" not in err
