"""The process boundary under attack: what a local attacker or a careless folder can plant, and
what a killed gradviz leaves behind. Real processes, real files in temporary folders."""

import glob
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from gradviz.engine import scratch
from gradviz.model import RunRequest, RunSettings

ROOT = Path(__file__).resolve().parent.parent
OK = Path(__file__).resolve().parent / "corpus" / "ok"


def gradviz(*args, cwd, timeout=240):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "gradviz", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
    )


# --- the import path ----------------------------------------------------------------------------
def test_modules_planted_in_the_current_folder_are_not_imported(tmp_path):
    marker = tmp_path / "imported.txt"
    for name in ("numpy", "torch", "tensorflow", "keras"):
        (tmp_path / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n"
            f"raise ImportError('the planted {name}.py was imported')\n"
        )
    proc = gradviz(
        "run",
        OK / "layer_with_params_torch.py",
        OK / "layer_with_params_tf.py",
        "--json",
        tmp_path / "r.json",
        cwd=tmp_path,
    )
    assert not marker.exists(), marker.read_text()
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((tmp_path / "r.json").read_text())
    frameworks = {r["framework"] for r in report["ops"] if r["status"] == "ok"}
    assert frameworks == {"torch", "tf"}, report["ops"]


# --- what the user's code starts ---------------------------------------------------------------
def processes_with_argv(argv: list[str]) -> list[int]:
    """Live (not zombie) processes whose command line is exactly `argv`."""
    want = "\0".join(argv) + "\0"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline") as fh:
                if fh.read() != want:
                    continue
            with open(f"/proc/{entry}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
        except OSError:
            continue
        found.append(int(entry))
    return found


def test_processes_an_op_starts_end_with_its_request(engine, tmp_path):
    # Unique sleep lengths name this test's processes among everything else on the machine.
    child, orphan = f"{4000 + os.getpid() % 1000}.25", f"{4000 + os.getpid() % 1000}.75"
    path = tmp_path / "spawns_torch.py"
    path.write_text(
        textwrap.dedent(f"""\
        import subprocess
        import torch

        class Spawns(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                subprocess.Popen(["sleep", "{child}"])
                subprocess.Popen(["sh", "-c", "sleep {orphan} &"])  # double fork: an orphan
                return x * 2

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * 2
        """)
    )
    res = engine.run_one(RunRequest(str(path), "Spawns", "torch", RunSettings(shape=(3,))))
    assert res.status == "ok", res.error
    assert res.tensor("x").grads["custom"].tolist() == [2.0, 2.0, 2.0]
    assert processes_with_argv(["sleep", child]) == []
    assert processes_with_argv(["sleep", orphan]) == []


# --- nothing left behind after a SIGKILL ------------------------------------------------------------
def wait_for(condition, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_sigkill_of_everything_mid_run_leaves_nothing_after_the_next_start(tmp_path):
    """gradviz's janitor removes its folders when gradviz is killed (tests/test_stop_signals.py);
    where the janitor is killed too (every process of the user), the next start sweeps them."""
    started = tmp_path / "op_started"
    path = tmp_path / "big_torch.py"
    path.write_text(
        textwrap.dedent(f"""\
        import torch

        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if x.numel() > 1000:
                    open({str(started)!r}, "w").close()
                return x * 2

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * 2
        """)
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gradviz",
            "run",
            str(path),
            "--framework",
            "torch",
            "--shape",
            "10000000",
            "--modes",
            "custom,default",
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        start_new_session=True,
    )
    try:
        mine = os.path.join(scratch.ROOT, f"gradviz-{proc.pid}-*")
        wait_for(lambda: started.exists() or proc.poll() is not None, 240, "the big op to start")
        # Stopped, the parent cannot take the worker's reply: its arrays stay in shared memory,
        # as when gradviz is killed while it reads them.
        os.kill(proc.pid, signal.SIGSTOP)
        [folder] = glob.glob(mine)
        wait_for(
            lambda: len(glob.glob(os.path.join(folder, "*.npy"))) >= 2,
            240,
            "the result's arrays in shared memory",
        )
        workers = [
            int(p) for p in os.listdir("/proc") if p.isdigit() and _parent(int(p)) == proc.pid
        ]
        assert workers
        for p in workers:  # the janitor first (its own session)
            with open(f"/proc/{p}/cmdline", "rb") as fh:
                if b"\0-S\0-c\0" in fh.read():
                    os.kill(p, signal.SIGKILL)
        os.killpg(proc.pid, signal.SIGKILL)  # the whole process group, as a terminal would
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    wait_for(lambda: not any(_parent(p) for p in workers), 30, "the workers to die with it")
    left = sum(os.path.getsize(f) for f in glob.glob(os.path.join(folder, "*")))
    assert left > 4 * 10**7  # a whole 10^7 float32 array at least: for the next start to sweep

    nxt = subprocess.run(
        [sys.executable, "-m", "gradviz", "list", str(path), "--framework", "torch"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert nxt.returncode == 0, nxt.stderr[-2000:]
    assert glob.glob(mine) == []
    assert glob.glob(f"/tmp/gradviz-*{proc.pid}*") == []


def _parent(pid: int) -> int:
    """The parent pid of a live process; 0 when it is gone (or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return 0 if fields[0] == "Z" else int(fields[1])


def test_has_children_sees_every_kind_of_child_and_reaps_none():
    # kill_descendants looks for processes only when has_children() says there are some: in a
    # fresh interpreter (the session's workers are this process's children), each kind of child
    script = textwrap.dedent("""\
        import ctypes, os, subprocess, threading, time
        from gradviz.engine import process_tree as pt
        seen = [pt.has_children()]
        p = subprocess.Popen(["sleep", "30"])
        seen.append(pt.has_children())                 # live
        p.kill()
        while open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
            time.sleep(0.01)
        seen.append(pt.has_children())                 # a zombie, still there to wait for
        p.wait()
        seen.append(pt.has_children())
        box = []
        t = threading.Thread(target=lambda: box.append(subprocess.Popen(["sleep", "30"])))
        t.start(); t.join()
        seen.append(pt.has_children())                 # started by a thread that has ended
        seen.append(pt.kill_descendants())
        seen.append(pt.has_children())
        pid = ctypes.CDLL(None, use_errno=True).syscall(56, 0, 0, 0, 0, 0)  # clone, no SIGCHLD
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        seen.append(pt.has_children())
        seen.append(pt.kill_descendants())
        print(seen)
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [
        "[False,",
        "True,",
        "True,",
        "False,",
        "True,",
        "1,",
        "False,",
        "True,",
        "1]",
    ]
