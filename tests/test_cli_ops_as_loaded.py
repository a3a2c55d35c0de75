"""`gradviz run` starts a framework's ops once that framework's own files are loaded
(cli/run_stream.py): a slow TensorFlow import no longer holds the torch ops back, and what needs
every file (the run's order, its total, `--op` matched through the other framework's twin)
follows once all are in."""

import os
import select
import subprocess
import sys
import threading

from cli_runs import ROOT

from gradviz.cli.run_stream import HeldEvents, OpsAsLoaded
from gradviz.model import FileCatalog, OpInfo, RunSettings

SETTINGS = RunSettings()


def _op(name, fw, qualname, file):
    return OpInfo(name, fw, "function", qualname, file, 1)


def _catalogs():
    torch_cat = FileCatalog(
        "/a_torch.py",
        "torch",
        (
            _op("scale", "torch", "ScaleFn", "/a_torch.py"),
            _op("only_t", "torch", "only_t", "/a_torch.py"),
        ),
    )
    tf_cat = FileCatalog("/b_tf.py", "tf", (_op("scale", "tf", "tf_scale", "/b_tf.py"),))
    return torch_cat, tf_cat


def _taken_so_far(stream, count):
    """The first `count` requests a stream gives, taken in a thread; None if it waits."""
    got, done = [], threading.Event()

    def take():
        for req in stream:
            got.append(req)
            if len(got) == count:
                break
        done.set()

    threading.Thread(target=take, daemon=True).start()
    return got if done.wait(30) else None


def test_a_framework_s_ops_go_before_the_other_framework_loaded():
    from gradviz.catalog import pair_ops, requests_for

    torch_cat, tf_cat = _catalogs()
    ops = OpsAsLoaded(("torch", "tf"), [], SETTINGS)
    torch_stream = ops.stream("torch")
    ops.loaded("torch", [torch_cat])
    early = _taken_so_far(torch_stream, 2)
    assert [(r.framework, r.qualname) for r in early] == [("torch", "ScaleFn"), ("torch", "only_t")]
    ops.loaded("tf", [tf_cat])
    run = requests_for(pair_ops([torch_cat, tf_cat]), ("torch", "tf"), SETTINGS)
    ops.all_loaded(run)
    assert list(torch_stream) == []  # nothing runs twice
    assert [r.qualname for r in ops.stream("tf")] == ["tf_scale"]
    # the results come back per framework, as given; the run's order is the pairs'
    results = [f"result of {r.qualname}" for r in [*early, run[1]]]
    assert ops.in_order(results) == [
        "result of ScaleFn",
        "result of tf_scale",
        "result of only_t",
    ]


def test_an_op_chosen_through_its_twin_waits_for_the_twin_s_framework():
    from gradviz.catalog import pair_ops, requests_for, select

    torch_cat, tf_cat = _catalogs()
    ops = OpsAsLoaded(("torch", "tf"), ["tf_scale"], SETTINGS)
    torch_stream = ops.stream("torch")
    ops.loaded("torch", [torch_cat])
    assert _taken_so_far(torch_stream, 1) is None  # ScaleFn is chosen only by its TF twin's name
    ops.loaded("tf", [tf_cat])
    chosen, missing = select(pair_ops([torch_cat, tf_cat]), ["tf_scale"])
    ops.all_loaded(requests_for(chosen, ("torch", "tf"), SETTINGS))
    assert missing == []
    assert [r.qualname for r in ops.stream("tf")] == ["tf_scale"]


def test_a_failed_load_ends_the_streams_and_held_events_keep_their_order():
    ops = OpsAsLoaded(("torch", "tf"), [], SETTINGS)
    ops.all_loaded([])  # loading raised: no framework said
    assert list(ops.stream("torch")) == [] and list(ops.stream("tf")) == []
    seen, held = [], HeldEvents()
    held("first")
    held("second")
    assert seen == []
    held.release(seen.append)
    held("third")
    assert seen == ["first", "second", "third"]


TORCH_OP = """
import os
import torch


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        fd = os.open({ran!r}, os.O_WRONLY | os.O_NONBLOCK)  # the test reads: the op ran
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
        return g * 2
"""

TF_OP = """
import tensorflow as tf

with open({go!r}) as f:  # its import waits until the test says so
    f.read()


@tf.custom_gradient
def double(x):
    def grad(dy):
        return dy * 2

    return x * 2, grad
"""


def test_a_torch_op_runs_while_the_tf_file_is_still_importing(tmp_path):
    ran, go = tmp_path / "ran", tmp_path / "go"
    os.mkfifo(ran)
    os.mkfifo(go)
    reader = os.open(ran, os.O_RDONLY | os.O_NONBLOCK)  # before the op writes
    torch_file = tmp_path / "ops_torch.py"
    torch_file.write_text(TORCH_OP.format(ran=str(ran)))
    tf_file = tmp_path / "ops_tf.py"
    tf_file.write_text(TF_OP.format(go=str(go)))
    report = tmp_path / "run.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradviz", "run", str(torch_file), str(tf_file)]
        # a load timeout past the wait below: the TF file is not given up on meanwhile
        + ["--modes", "default,custom", "--timeout", "400", "--json", str(report)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # the TF file cannot finish importing before we open `go`: a torch backward now ran
        # while TensorFlow's worker was still loading
        readable, _, _ = select.select([reader], [], [], 180)
        assert readable, "the torch op did not run while the TF file was importing"
        assert os.read(reader, 1) == b"x"
        # opening blocks until the TF import opens it (a thread: a worker that died never does)
        threading.Thread(target=go.write_text, args=("go",), daemon=True).start()
        out, err = proc.communicate(timeout=240)
    finally:
        proc.kill()
        os.close(reader)
    assert proc.returncode == 0, err
    import json

    ops = {(op["framework"], op["name"]): op for op in json.loads(report.read_text())["ops"]}
    assert sorted(ops) == [("tf", "double"), ("torch", "Double")]
    for op in ops.values():  # d(2x)/dx under ones upstream, by both paths
        [x] = [t for t in op["tensors"] if t["name"] == "x"]
        assert op["status"] == "ok" and x["verdict"] == "match"
        for mode in ("default", "custom"):
            assert (x["stats"][mode]["min"], x["stats"][mode]["max"]) == (2.0, 2.0)
    # the progress lines count to the whole run's total, and both frameworks' ops are in
    assert sorted(line.split()[1] for line in err.splitlines() if line.startswith("[")) == [
        "tf",
        "torch",
    ]
    assert all(line.startswith(("[1/2]", "[2/2]")) for line in err.splitlines() if line[:1] == "[")
