"""Worker processes (engine.worker.Worker): warm reuse, replacement after a crash, kill on
timeout / cancel / memory, and no worker process left behind (after Engine.close, and after
Ctrl-C on `gradviz run`).

Tests that kill workers use their own torch-only Engine (each replacement costs a torch import).
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gradviz.engine import Engine
from gradviz.engine.errors import describe_exit
from gradviz.engine.memory import GIB, memory_limit_from_env
from gradviz.model import RunRequest, RunSettings

CORPUS = Path(__file__).resolve().parent / "corpus" / "broken"
ROOT = Path(__file__).resolve().parent.parent


def marker_line(path) -> int:
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        if "# FAILS HERE" in line:
            return i
    raise AssertionError(f"no marker in {path}")


def hang_lines(path) -> tuple[str, str]:
    """A busy loop can be caught on its `while True:` line or on its body."""
    line = marker_line(path)
    return f"{path}:{line}", f"{path}:{line + 1}"


def request(name: str, qualname: str, framework: str = "torch", timeout: float = 60.0):
    return RunRequest(str(CORPUS / name), qualname, framework, RunSettings(timeout=timeout))


def signalling_hang(folder: Path) -> tuple[Path, Path]:
    """A torch op whose backward touches a marker file, then spins. The worker turns `busy`
    before the op reaches the user's code: a test that needs the op *in* the loop waits for the
    marker instead."""
    marker = folder / "in_the_loop"
    path = folder / "signalling_hang_torch.py"
    path.write_text(
        "import torch\n\n\n"
        "class HangBackward(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad_output):\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "        while True:  # FAILS HERE\n"
        "            pass\n"
    )
    return path, marker


def worker_pids(parent_pid: int) -> list[int]:
    """Live gradviz worker processes started by `parent_pid` (their argv names the parent)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv = fh.read().decode(errors="replace").split("\0")
            with open(f"/proc/{entry}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z":
            continue  # a zombie has exited; only its parent's wait is missing
        if any("gradviz.engine.child" in a for a in argv) and str(parent_pid) in argv[3:]:
            found.append(int(entry))
    return found


def processes_with_argv(argv: list[str]) -> list[int]:
    """Live (not zombie) processes whose command line is exactly `argv`."""
    want = "\0".join(argv) + "\0"
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline") as fh:
                if not entry.isdigit() or fh.read() != want:
                    continue
        except OSError:
            continue
        if alive(int(entry)):
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(condition, timeout: float = 60.0, what: str = "condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


# --- pure helpers -----------------------------------------------------------------------------
def test_describe_exit_names_the_signal():
    assert describe_exit(-signal.SIGSEGV) == (
        "the worker was killed by SIGSEGV (segmentation fault)"
    )
    assert describe_exit(-signal.SIGABRT) == "the worker was killed by SIGABRT (abort)"
    assert describe_exit(7).startswith("the worker process exited with code 7")


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2", 2 * GIB),
        ("1.5", int(1.5 * GIB)),
        ("512M", 512 * 1024**2),
        ("3g", 3 * GIB),
        ("2GB", 2 * GIB),
        ("0", 0),
        ("off", 0),
    ],
)
def test_memory_limit_from_env(monkeypatch, value, expected):
    monkeypatch.setenv("GRADVIZ_WORKER_MEMORY", value)
    assert memory_limit_from_env() == expected


def test_memory_limit_default_is_half_the_ram(monkeypatch):
    monkeypatch.delenv("GRADVIZ_WORKER_MEMORY", raising=False)
    with open("/proc/meminfo") as fh:
        total = int(next(ln for ln in fh if ln.startswith("MemTotal:")).split()[1]) * 1024
    assert memory_limit_from_env() == total // 2


# --- warm reuse (shared engine) ---------------------------------------------------------------
def test_second_run_reuses_the_warm_worker(engine):
    worker = engine.workers["torch"]
    first = engine.run_one(request("good_and_bad_torch.py", "GoodRoundSTE"))
    pid, starts = worker.pid(), worker.status.starts
    second = engine.run_one(request("good_and_bad_torch.py", "GoodRoundSTE"))
    assert first.status == second.status == "ok"
    # Same process, nothing started again: torch was not imported a second time.
    assert worker.pid() == pid and pid > 0
    assert worker.status.starts == starts
    assert worker.status.state == "ready"


# --- replacement (own torch engine) -----------------------------------------------------------
@pytest.fixture(scope="module")
def torch_engine():
    eng = Engine(frameworks=("torch",))
    eng.workers["torch"].wait_ready(180)
    yield eng
    eng.close()


def _good_run_works(eng):
    res = eng.run_one(request("good_and_bad_torch.py", "GoodRoundSTE"))
    assert res.status == "ok", res.error
    assert res.tensor("x").grads["custom"].tolist() == [1.0] * 200


def test_crash_is_reported_and_the_worker_replaced_at_once(torch_engine):
    worker = torch_engine.workers["torch"]
    old_pid, starts, old_log = worker.pid(), worker.status.starts, worker.crash_log
    assert os.path.exists(old_log)
    res = torch_engine.run_one(request("segfault_torch.py", "SegfaultBackward"))
    assert not os.path.exists(old_log)  # read, then removed
    assert res.status == "error"
    assert res.error.kind == "crashed" and res.error.type == "Crashed"
    assert "SegfaultBackward" in res.error.message and "SIGSEGV" in res.error.message
    path = str(CORPUS / "segfault_torch.py")
    assert res.error.where == f"{path}:{marker_line(path)}"
    assert "gradviz" not in res.error.traceback.replace(str(ROOT / "tests"), "")
    assert not alive(old_pid)
    # The successor was started without waiting for the next request.
    assert worker.status.starts == starts + 1
    assert worker.pid() not in (0, old_pid)
    _good_run_works(torch_engine)


def test_timeout_kills_and_replaces_the_worker(torch_engine):
    worker = torch_engine.workers["torch"]
    worker.wait_ready(180)
    old_pid = worker.pid()
    res = torch_engine.run_one(request("hang_torch.py", "HangBackward", timeout=2))
    assert res.error.kind == "timeout" and res.error.type == "Timeout"
    assert "within 2 s" in res.error.message
    path = str(CORPUS / "hang_torch.py")
    # From the stack dumped before the kill: inside the busy loop (`while True:` / `pass`).
    assert res.error.where in hang_lines(path)
    assert not alive(old_pid)
    _good_run_works(torch_engine)


def test_cancel_stops_the_running_op_keeps_its_worker_and_skips_the_rest(torch_engine, tmp_path):
    """Issue 28 item 4: a cancel interrupts the op in its worker, which answers and is kept
    (the next run does not import torch again); it was killed and replaced."""
    worker = torch_engine.workers["torch"]
    worker.wait_ready(180)
    old_pid, starts = worker.pid(), worker.status.starts
    hang, in_the_loop = signalling_hang(tmp_path)
    reqs = [
        RunRequest(str(hang), "HangBackward", "torch", RunSettings(timeout=120)),
        request("good_and_bad_torch.py", "GoodRoundSTE"),
    ]
    out = []
    runner = threading.Thread(target=lambda: out.extend(torch_engine.run(reqs)))
    runner.start()
    wait_for(in_the_loop.exists, what="the op to enter its endless loop")
    torch_engine.cancel()
    runner.join(60)
    assert not runner.is_alive()
    assert [r.error.kind for r in out] == ["cancelled", "cancelled"]
    assert out[0].error.where in hang_lines(hang)  # the user's line, from its own stack
    assert out[0].error.message.endswith("its torch worker was kept")
    assert alive(old_pid) and worker.pid() == old_pid and worker.status.starts == starts
    assert worker.status.state == "ready"
    _good_run_works(torch_engine)
    assert worker.pid() == old_pid


def test_a_worker_that_does_not_answer_a_cancel_is_replaced(torch_engine, tmp_path):
    """An op that swallows the cancel (a bare `except BaseException` in a loop) keeps its
    worker busy: it is killed after the grace and replaced, as a hang is."""
    worker = torch_engine.workers["torch"]
    worker.wait_ready(180)
    old_pid, starts = worker.pid(), worker.status.starts
    marker = tmp_path / "in_the_loop"
    path = tmp_path / "swallows_cancel_torch.py"
    path.write_text(
        "import time\nimport torch\n\n\n"
        "class Swallows(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "        while True:\n"
        "            try:\n"
        "                time.sleep(0.01)\n"
        "            except BaseException:\n"
        "                pass\n"
    )
    out = []
    runner = threading.Thread(
        target=lambda: out.extend(
            torch_engine.run([RunRequest(str(path), "Swallows", "torch", RunSettings(timeout=120))])
        )
    )
    runner.start()
    wait_for(marker.exists, what="the op to enter its loop")
    torch_engine.cancel()
    runner.join(60)
    assert not runner.is_alive()
    assert [r.error.kind for r in out] == ["cancelled"]
    assert "replaced (it did not answer the cancel)" in out[0].error.message
    assert not alive(old_pid) and worker.status.starts == starts + 1
    _good_run_works(torch_engine)


def test_cancel_just_as_an_op_starts_is_not_lost(torch_engine, tmp_path):
    """Cancel in the moment between an op's start (on_start: the window shows it running) and
    its worker call: the op ends cancelled, not after its whole timeout (the call used to clear
    the worker's cancel flag as it began)."""
    torch_engine.workers["torch"].wait_ready(180)
    hang, _ = signalling_hang(tmp_path)
    req = RunRequest(str(hang), "HangBackward", "torch", RunSettings(timeout=30))
    out = torch_engine.run([req], on_start=lambda _req: torch_engine.cancel())
    assert [r.error.kind for r in out] == ["cancelled"]
    _good_run_works(torch_engine)


def test_processes_of_a_cancelled_op_die_with_its_worker(torch_engine, tmp_path):
    worker = torch_engine.workers["torch"]
    worker.wait_ready(180)
    sleep = ["sleep", f"{5000 + os.getpid() % 1000}.5"]
    marker = tmp_path / "spawned"
    path = tmp_path / "spawns_then_hangs_torch.py"
    path.write_text(
        "import subprocess\nimport torch\n\n\n"
        "class SpawnsThenHangs(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        f"        subprocess.Popen({sleep!r})\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "        while True:\n"
        "            pass\n\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad_output):\n"
        "        return grad_output\n"
    )
    out = []
    runner = threading.Thread(
        target=lambda: out.append(
            torch_engine.run_one(
                RunRequest(str(path), "SpawnsThenHangs", "torch", RunSettings(timeout=120))
            )
        )
    )
    runner.start()
    wait_for(marker.exists, what="the op to start its process")
    assert len(processes_with_argv(sleep)) == 1
    torch_engine.cancel()
    runner.join(60)
    assert out[0].error.kind == "cancelled"
    assert processes_with_argv(sleep) == []  # killed with the worker's process group
    _good_run_works(torch_engine)


def test_memory_hog_is_killed_above_the_limit(torch_engine):
    worker = torch_engine.workers["torch"]
    worker.wait_ready(180)
    saved, worker.memory_limit = worker.memory_limit, int(1.5 * GIB)
    try:
        res = torch_engine.run_one(request("memory_hog_torch.py", "MemoryHog", timeout=120))
    finally:
        worker.memory_limit = saved
    assert res.error.type == "OutOfMemory" and res.error.kind == "crashed"
    assert "used more than 1.5 GiB" in res.error.message
    path = str(CORPUS / "memory_hog_torch.py")
    assert res.error.where == f"{path}:{marker_line(path)}"
    _good_run_works(torch_engine)


def test_a_file_that_kills_the_worker_at_import_spares_the_others(torch_engine, tmp_path):
    aborts = tmp_path / "aborts_at_import.py"
    aborts.write_text("import os\nimport torch\n\nos.abort()\n")
    hangs = tmp_path / "hangs_at_import.py"
    hangs.write_text("import torch\n\nwhile True:\n    pass\n")
    good = CORPUS / "good_and_bad_torch.py"
    cats = torch_engine.load([str(aborts), str(good), str(hangs)], timeout=3)
    by_file = {c.file: c for c in cats}
    assert [o.qualname for o in by_file[str(good)].ops] == ["GoodRoundSTE", "BadBackward"]
    assert by_file[str(good)].error is None
    crashed = by_file[str(aborts)].error
    assert crashed.kind == "load" and "SIGABRT" in crashed.message
    assert crashed.where == f"{aborts}:4"
    hung = by_file[str(hangs)].error
    assert hung.kind == "load" and hung.type == "Timeout"
    assert hung.where in (f"{hangs}:3", f"{hangs}:4")
    _good_run_works(torch_engine)


# --- nothing left behind ----------------------------------------------------------------------
def test_close_leaves_no_worker_process():
    eng = Engine(frameworks=("torch",))
    pid = eng.workers["torch"].pid()
    assert worker_pids(os.getpid()) and pid in worker_pids(os.getpid())
    eng.close()  # while the worker is still importing torch
    assert not alive(pid)
    assert eng.workers["torch"].status.state == "stopped"


def test_close_during_a_run_cancels_it_and_leaves_no_worker_process(tmp_path):
    eng = Engine(frameworks=("torch",))
    worker = eng.workers["torch"]
    worker.wait_ready(180)
    pid = worker.pid()
    hang, in_the_loop = signalling_hang(tmp_path)
    out = []
    runner = threading.Thread(
        target=lambda: out.append(
            eng.run_one(RunRequest(str(hang), "HangBackward", "torch", RunSettings(timeout=120)))
        )
    )
    runner.start()
    wait_for(in_the_loop.exists, what="the op to enter its endless loop")
    eng.close()
    runner.join(60)
    assert out[0].error.kind == "cancelled"
    assert not alive(pid)
    assert worker.pid() == 0 and worker.status.state == "stopped"  # and no successor started


def test_ctrl_c_on_gradviz_run_leaves_no_worker_process():
    files = [str(CORPUS / "good_and_bad_torch.py"), str(CORPUS / "hang_torch.py")]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gradviz",
            "run",
            *files,
            "--framework",
            "torch",
            "--timeout",
            "120",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        seen = []
        # Progress lines come as each op ends: after the two ops of good_and_bad, the hang runs.
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("[2/3]"):
                break
        assert any(ln.startswith("[2/3]") for ln in seen), "".join(seen)
        workers = worker_pids(proc.pid)
        assert len(workers) == 1
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        rest = proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, "".join(seen) + rest
    assert "interrupted" in rest
    assert not any(alive(p) for p in workers)
    assert worker_pids(proc.pid) == []


def test_workers_exit_when_their_parent_is_killed(tmp_path):
    script = (
        "from gradviz.engine import Engine\n"
        "e = Engine(frameworks=('torch',)); e.workers['torch'].wait_ready(180)\n"
        "print(e.workers['torch'].pid(), flush=True)\n"
        "import time; time.sleep(600)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        child = int(proc.stdout.readline())
        assert alive(child)
        with open(f"/proc/{child}/cmdline", "rb") as fh:
            folder = fh.read().decode().split("\0")[-2]  # ... parent FOLDER, then a NUL
        assert os.path.exists(os.path.join(folder, "crash.log"))
    finally:
        proc.kill()  # SIGKILL: no atexit, no cleanup in the parent
        proc.wait()
    wait_for(lambda: not alive(child), 30, "the orphaned worker to exit")
    # Killed with its parent (PR_SET_PDEATHSIG), it left its scratch folder: the next start
    # sweeps it.
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from gradviz.engine import Engine\nEngine(frameworks=('torch',)).close()",
        ],
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    assert not os.path.exists(folder)


def test_results_reach_the_parent_without_importing_the_framework():
    # Anything torch-typed in a reply (torch.__version__ is a TorchVersion) would import torch
    # in the parent when unpickled.
    script = (
        "import sys\nfrom gradviz.engine import Engine\nfrom gradviz.model import *\n"
        "with Engine(frameworks=('torch',)) as e:\n"
        f"    r = e.run_one(RunRequest({str(CORPUS / 'good_and_bad_torch.py')!r}, "
        "'GoodRoundSTE', 'torch'))\n"
        "print(r.status, type(r.framework_version).__name__, 'torch' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert proc.stdout.split() == ["ok", "str", "False"], proc.stderr[-2000:]


def test_a_cancel_keeps_the_tf_worker_too(engine, tmp_path):
    """TensorFlow calls a custom gradient from its tape's C++: the cancel still unwinds it there
    and the worker is kept (the shared engine: nothing is imported again)."""
    worker = engine.workers["tf"]
    worker.wait_ready(180)
    pid, starts = worker.pid(), worker.status.starts
    marker = tmp_path / "in_the_loop"
    path = tmp_path / "hang_tf.py"
    path.write_text(
        "import tensorflow as tf\n\n\n"
        "@tf.custom_gradient\n"
        "def hangs(x):\n"
        "    def grad(g):\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "        while True:  # FAILS HERE\n"
        "            pass\n"
        "    return x * 2, grad\n"
    )
    out = []
    runner = threading.Thread(
        target=lambda: out.extend(
            engine.run([RunRequest(str(path), "hangs", "tf", RunSettings(timeout=120))])
        )
    )
    runner.start()
    wait_for(marker.exists, what="the gradient to enter its endless loop")
    engine.cancel()
    runner.join(60)
    assert not runner.is_alive()
    assert [r.error.kind for r in out] == ["cancelled"]
    assert out[0].error.message.endswith("its tf worker was kept")
    assert out[0].error.where in hang_lines(path)
    assert worker.pid() == pid and worker.status.starts == starts
    res = engine.run_one(
        RunRequest(
            str(ROOT / "resources" / "examples" / "tutorial_tf.py"),
            "round_ste",
            "tf",
            RunSettings(),
        )
    )
    assert res.status == "ok" and worker.pid() == pid
