"""Isolation: user code fails in every way; gradviz reports where, and goes on.

The broken corpus runs through `gradviz run` in one invocation (one import of each framework);
finer points (layer construction, reload, captured output, stack dumps) use the shared engine.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradviz.model import RunRequest, RunSettings
from gradviz.user_frames import locate_in_stack_dump

ROOT = Path(__file__).resolve().parent.parent
BROKEN = Path(__file__).resolve().parent / "corpus" / "broken"

# file -> (op, kind of error, words the message must hold); None: the op must succeed.
RUNNABLE = {
    "abort_tf.py": ("abort_forward", "crashed", ["abort_forward", "SIGABRT"]),
    "hang_tf.py": ("hang_backward", "timeout", ["hang_backward", "within 6 s"]),
    "hang_torch.py": ("HangBackward", "timeout", ["HangBackward", "within 6 s"]),
    # the command line runs one pass: a hang in the numeric reference times out the op (exit 3)
    "hang_numeric_torch.py": ("HangNumeric", "timeout", ["HangNumeric", "within 6 s"]),
    "os_exit_tf.py": ("os_exit_backward", "crashed", ["os_exit_backward", "os._exit(7)"]),
    "raise_backward_tf.py": ("raise_backward", "error", ["backward failed on purpose"]),
    "raise_backward_torch.py": ("RaiseBackward", "error", ["backward failed on purpose"]),
    "raise_forward_tf.py": ("raise_forward", "error", ["forward failed on purpose"]),
    "raise_forward_torch.py": ("RaiseForward", "error", ["forward failed on purpose"]),
    "segfault_ctypes_torch.py": ("NullReadBackward", "crashed", ["NullReadBackward", "SIGSEGV"]),
    "segfault_torch.py": ("SegfaultBackward", "crashed", ["SegfaultBackward", "SIGSEGV"]),
    "sys_exit_torch.py": ("SysExitForward", "crashed", ["sys.exit(3)"]),
    "wrong_grad_count_torch.py": ("WrongGradCount", "error", ["incorrect number of gradients"]),
    "good_and_bad_torch.py": ("BadBackward", "error", ["BadBackward failed on purpose"]),
}
GOOD = {"GoodRoundSTE": "good_and_bad_torch.py", "NoisyRoundSTE": "prints_torch.py"}
GRADVIZ_FRAME = re.compile(r'File "[^"]*/gradviz/')


def marker_line(path) -> int:
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        if "# FAILS HERE" in line:
            return i
    raise AssertionError(f"no marker in {path}")


def expected_where(name: str) -> set[str]:
    path = BROKEN / name
    line = marker_line(path)
    # A busy loop may be caught on its `while True:` line or on its body.
    lines = {line, line + 1} if name.startswith("hang") else {line}
    return {f"{path}:{n}" for n in lines}


def gradviz_run(*args, timeout=400):
    return subprocess.run(
        [sys.executable, "-m", "gradviz", "run", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    report = tmp_path_factory.mktemp("corpus") / "report.json"
    files = [str(BROKEN / f) for f in sorted(set(RUNNABLE) | set(GOOD.values()))]
    proc = gradviz_run(*files, "--timeout", "6", "--json", str(report))
    return proc, json.loads(report.read_text())


def test_corpus_run_exits_3(corpus_run):
    proc, _ = corpus_run
    assert proc.returncode == 3, proc.stderr


@pytest.mark.parametrize("name", sorted(RUNNABLE))
def test_each_broken_op_is_an_error_at_the_users_line(corpus_run, name):
    proc, report = corpus_run
    op, kind, words = RUNNABLE[name]
    [entry] = [o for o in report["ops"] if o["qualname"] == op]
    assert entry["status"] == "error"
    err = entry["error"]
    assert err["kind"] == kind
    assert err["where"] in expected_where(name)
    for word in words:
        assert word in err["message"]
    # The printed paragraph names the file:line (relative to the working directory).
    rel = os.path.relpath(err["where"], ROOT)
    assert f"{op} ({entry['framework']}) failed at {rel}" in proc.stdout + proc.stderr
    # The user's own frames only.
    assert not GRADVIZ_FRAME.search(err["traceback"])


def test_good_ops_beside_broken_ones_report_gradients(corpus_run):
    _, report = corpus_run
    for op, name in GOOD.items():
        [entry] = [o for o in report["ops"] if o["qualname"] == op]
        assert entry["status"] == "ok" and entry["error"] is None
        assert entry["file"] == str(BROKEN / name)
        assert {t["name"] for t in entry["tensors"]} == {"x", "out"}


def test_no_gradviz_frame_and_no_user_output_printed(corpus_run):
    proc, _ = corpus_run
    text = proc.stdout + proc.stderr
    assert not GRADVIZ_FRAME.search(text)
    assert "Traceback (most recent call last)" not in text
    assert "Fatal Python error" not in text
    # prints_torch prints in forward and backward: kept with its result, not in gradviz's output
    assert "prints_torch: forward called" not in text


def test_files_that_cannot_be_loaded_exit_2():
    files = [str(BROKEN / "syntax_error.py"), str(BROKEN / "import_error.py")]
    proc = gradviz_run(*files, "--framework", "torch")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    text = proc.stdout + proc.stderr
    for name in ("syntax_error.py", "import_error.py"):
        rel = os.path.relpath(BROKEN / name, ROOT)
        assert f"{rel}:{marker_line(BROKEN / name)}" in text
    assert "was never closed" in text and "gradviz_no_such_module_xyz" in text
    assert not GRADVIZ_FRAME.search(text)


# --- the shared engine ------------------------------------------------------------------------
def run_op(engine, path, qualname, framework="torch", **settings):
    return engine.run_one(RunRequest(str(path), qualname, framework, RunSettings(**settings)))


def test_output_and_warnings_are_kept_per_op(engine):
    res = run_op(engine, BROKEN / "prints_torch.py", "NoisyRoundSTE", modes=("custom",))
    assert res.status == "ok"
    assert res.log.splitlines() == ["prints_torch: forward called", "prints_torch: backward called"]
    path = BROKEN / "prints_torch.py"
    assert res.warnings == (
        f"{path}:15: UserWarning: prints_torch: warning from forward",
        f"{path}:21: UserWarning: prints_torch: warning from backward",
    )
    other = run_op(engine, BROKEN / "good_and_bad_torch.py", "GoodRoundSTE", modes=("custom",))
    assert other.log == "" and other.warnings == ()


def test_repeated_warnings_are_counted_once(engine):
    # The numeric reference calls the printing forward many times: one line per warning, counted.
    res = run_op(engine, BROKEN / "prints_torch.py", "NoisyRoundSTE")
    forward = [w for w in res.warnings if "warning from forward" in w]
    assert len(forward) == 1 and re.search(r"\(x\d+\)$", forward[0])


def test_error_while_building_a_torch_module(engine, write_module):
    path = write_module(
        "bad_module.py",
        """\
        import torch


        class Scaled(torch.nn.Module):
            def __init__(self):
                super().__init__()
                raise RuntimeError("no weights for you")

            def forward(self, x):
                return x * 2
        """,
    )
    cats = engine.load([path])
    err = cats[0].error if cats[0].error else None
    if err is None:  # loading kept it; the run reports the construction error
        res = run_op(engine, path, "Scaled")
        assert res.status == "error"
        err = res.error
    assert err.where == f"{path}:7"
    assert "no weights for you" in err.message


def test_error_while_building_a_keras_layer(engine, write_module):
    path = write_module(
        "bad_layer.py",
        """\
        import keras
        import tensorflow as tf


        class Broken(keras.layers.Layer):
            def build(self, input_shape):
                raise ValueError("cannot build this layer")

            def call(self, x):
                return x * 2.0
        """,
    )
    res = run_op(engine, path, "Broken", framework="tf")
    assert res.status == "error"
    assert res.error.where == f"{path}:7"
    assert "cannot build this layer" in res.error.message
    assert not GRADVIZ_FRAME.search(res.error.traceback)


def test_changed_file_is_reloaded_in_the_warm_worker(engine, write_module):
    source = """\
        import torch


        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * {k}

            @staticmethod
            def backward(ctx, g):
                return g * {k}
        """
    path = write_module("scale.py", source.format(k="2.0"))
    pid = engine.workers["torch"].pid()
    first = run_op(engine, path, "Scale", modes=("custom",))
    write_module("scale.py", source.format(k="3.0"))
    second = run_op(engine, path, "Scale", modes=("custom",))
    assert first.tensor("x").grads["custom"][0] == 2.0
    assert second.tensor("x").grads["custom"][0] == 3.0
    assert engine.workers["torch"].pid() == pid


def test_a_changed_helper_module_is_reloaded_too(engine, write_module):
    helper = "FACTOR = {k}\n"
    write_module("factor.py", helper.format(k="2.0"))
    path = write_module(
        "uses_helper.py",
        """\
        import torch
        from factor import FACTOR


        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * FACTOR

            @staticmethod
            def backward(ctx, g):
                return g * FACTOR
        """,
    )
    first = run_op(engine, path, "Scale", modes=("custom",))
    write_module("factor.py", helper.format(k="5.0"))
    second = run_op(engine, path, "Scale", modes=("custom",))
    assert first.tensor("x").grads["custom"][0] == 2.0
    assert second.tensor("x").grads["custom"][0] == 5.0


# --- reading faulthandler's dump --------------------------------------------------------------
DUMP = """\
Fatal Python error: Segmentation fault

Thread 0x00007f0000000001 (most recent call first):
  File "{py}/threading.py", line 320 in wait
  File "{gv}/engine/child.py", line 20 in _watch_parent

Current thread 0x00007f0000000002 (most recent call first):
  File "{py}/ctypes/__init__.py", line 519 in string_at
  File "{user}", line 14 in backward
  File "{site}/torch/autograd/function.py", line 325 in apply
  File "{user}", line 30 in helper
  File "{gv}/backends/runner.py", line 92 in _run
  File "<string>", line 1 in <module>

Extension modules: numpy._core._multiarray_umath (total: 1)
"""


def test_stack_dump_points_at_the_innermost_user_frame(tmp_path):
    import sysconfig

    import gradviz

    user = str(tmp_path / "ops.py")
    (tmp_path / "ops.py").write_text("\n" * 40)
    text = DUMP.format(
        py=sysconfig.get_paths()["stdlib"],
        user=user,
        gv=os.path.dirname(gradviz.__file__),
        site=sysconfig.get_paths()["purelib"],
    )
    where, tb = locate_in_stack_dump(text)
    assert where == f"{user}:14"
    assert re.findall(r'File "(.+)", line (\d+), in (\w+)', tb) == [
        (user, "30", "helper"),
        (user, "14", "backward"),
    ]


def test_stack_dump_without_user_frames_locates_nothing():
    assert locate_in_stack_dump(
        'Fatal Python error: Aborted\n\nStack:\n  File "<string>", line 1 in <module>\n'
    ) == ("", "")


def test_stack_dump_prefers_the_thread_that_serves_requests(tmp_path):
    """A thread the user's module started (sleeping in user code) comes first in the dump; the
    hung op is in the thread whose stack ends in the worker's request loop."""
    import sysconfig

    import gradviz

    user = str(tmp_path / "ops.py")
    (tmp_path / "ops.py").write_text("\n" * 60)
    py, gv = sysconfig.get_paths()["stdlib"], os.path.dirname(gradviz.__file__)
    text = (
        f"Thread 0x1 (most recent call first):\n"
        f'  File "{user}", line 12 in <lambda>\n'
        f'  File "{py}/threading.py", line 982 in run\n\n'
        f"Current thread 0x2 (most recent call first):\n"
        f'  File "{user}", line 53 in backward\n'
        f'  File "{gv}/backends/runner.py", line 92 in _run\n'
        f'  File "{gv}/engine/child.py", line 111 in main\n'
    )
    assert locate_in_stack_dump(text)[0] == f"{user}:53"


HOSTILE_MODULE = """\
    import sys
    import threading
    import time

    import torch

    threading.Thread(target=lambda: time.sleep(10**6)).start()   # non-daemon, never ends


    class KbInt(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise KeyboardInterrupt  # FAILS HERE


    class ClosesStdout(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            print("last words")
            sys.stdout.close()
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3


    class Hang(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            while True:  # HANGS HERE
                pass
"""


def test_hostile_module_state_does_not_reach_the_next_op(engine, write_module):
    """A KeyboardInterrupt raised by hand is the user's error at their line (it was a gradviz
    'internal error'); closing sys.stdout breaks neither that op nor the next (the next one
    timed out); a hang is located in the serving thread, not in the user's sleeping thread."""
    path = write_module("hostile.py", HOSTILE_MODULE)
    lines = Path(path).read_text().splitlines()
    line_of = {
        tag: i for i, text in enumerate(lines, 1) for tag in ("FAILS", "HANGS") if tag in text
    }
    fast = RunSettings(modes=("custom", "default"), timeout=3.0)
    [kb] = engine.run([RunRequest(str(path), "KbInt", "torch", fast)])
    assert kb.status == "error" and kb.error.type == "KeyboardInterrupt"
    assert kb.error.where == f"{path}:{line_of['FAILS']}"
    for _ in range(2):  # the second run finds the stdout the first one closed
        [closed] = engine.run([RunRequest(str(path), "ClosesStdout", "torch", fast)])
        assert closed.status == "ok", closed.error
        assert closed.tensor("x").grads["custom"].tolist() == [3.0] * 200
        assert "last words" in closed.log
    [hang] = engine.run([RunRequest(str(path), "Hang", "torch", fast)])
    assert hang.error.kind == "timeout"
    assert hang.error.where in {f"{path}:{line_of['HANGS']}", f"{path}:{line_of['HANGS'] + 1}"}
