"""Nothing lost when the numeric pass fails (issue 13 item 5): an op whose quick pass (custom,
default) came back and whose numeric pass then times out, crashes its worker or raises keeps
custom and default in the grid and the Numbers table; the numeric column, the Numbers table,
Diagnostics (an error entry) and the JSON export say what happened to numeric, and the op counts
as failed with the error mark: custom ≈ default without numeric is no pass."""

import pytest

pytest.importorskip("pytestqt")

import numpy as np  # noqa: E402
from gui_helpers import RUN_TIMEOUT_MS, export_whole_run_json, torch_cell  # noqa: E402

pytestmark = pytest.mark.gui

TIMEOUT_S = 3  # the per-op timeout: the quick pass of these ops takes milliseconds

# The numeric pass runs the op in float64 (the quick pass in float32): only there do these
# ops hang, crash their worker or raise.
OPS_SRC = """
import os
import time
import torch

class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.dtype == torch.float64:
            time.sleep(3600)  # HANGS HERE
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return g

class CrashNumeric(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.dtype == torch.float64:
            os._exit(3)  # CRASHES HERE
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0

class RaiseNumeric(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.dtype == torch.float64:
            raise ValueError("no float64 here")  # RAISES HERE
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0

class Right(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3.0

    @staticmethod
    def backward(ctx, g):
        return g * 3.0
"""


def _line(path, marker):
    with open(path) as f:
        return next(i for i, line in enumerate(f, 1) if marker in line)


def _run(qtbot, win, keys, shown):
    win.tree.select_pair(shown)
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run(keys)
    return {r.request.qualname: r for r in done.args[0]}


def _assert_kept_with_numeric_failed(win, key, kind, message, where, shown, custom, default):
    """Custom and default as the quick pass gave them; numeric said failed everywhere the window
    speaks of it; the op failed (its mark the error mark, never a pass)."""
    name = key[2]
    res = win.state.results.result(key)
    assert res.status == "ok" and res.error is None and not res.partial
    assert res.numeric_failed and not res.numeric_cancelled
    err = res.mode_errors["numeric"]
    assert (err.kind, err.message) == (kind, message)
    if where is not None:
        assert err.where == where
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], np.full(200, custom, np.float32))
    np.testing.assert_array_equal(x.grads["default"], np.full(200, default, np.float32))
    assert "numeric" not in x.grads and "numeric" not in res.tensor("out").grads
    assert win.state.progress.states[key] == "error"
    assert win.state.op_mark(key) == "error" and win.tree.shown_mark(key)[0] == "✗"
    # the grid: custom and default drawn, numeric says what happened (not "computing…")
    win.show_pair(name)
    assert win.grid.message() == "" and {"x", "out"} <= set(win.grid.rows)
    assert torch_cell(win, "x", "custom").has_data and torch_cell(win, "x", "default").has_data
    numeric = torch_cell(win, "x", "numeric")
    assert not numeric.has_data and not numeric.slot.waiting()
    said = "raised" if kind == "error" else "failed:"
    assert numeric.message == f"numeric {said} {err.one_line()}"
    text = win.grid.rows["x"].verdicts.text()
    assert f"torch: {shown}, numeric failed" in text and f"torch: {shown}<" not in text
    # the Numbers table
    nt = win.numbers
    assert nt.text("x", "torch", "verdict") == f"{shown}, numeric failed"
    assert nt.text("x", "torch", "numeric min") == "error"
    assert nt.value("x", "torch", "custom min") == pytest.approx(custom)
    assert nt.value("x", "torch", "default max") == pytest.approx(default)
    assert nt.text("x", "torch", "explanation").endswith(
        f"(numeric {said} {err.one_line()}: custom is not checked against numeric)"
    )
    # Diagnostics: an error entry that names the numeric mode and the user's line
    entries = [p for p in win.diagnostics.entries() if p.key == key]
    failed = [p for p in entries if p.severity == "error"]
    assert len(failed) == 1 and failed[0].op == f"{name} (torch) · numeric"
    assert failed[0].message == f"{err.type}: {message}"
    assert failed[0].where == err.where
    assert not [p for p in entries if p.severity == "info" and "numeric" in p.op]


def test_numeric_timeout_keeps_custom_and_default_and_fails_the_op(
    qtbot, make_window, write_module, tmp_path, monkeypatch
):
    path = write_module("ops.py", OPS_SRC)
    win = make_window([path], {"run/modes": "default,custom,numeric", "run/timeout": TIMEOUT_S})
    ste, right = ("torch", path, "RoundSTE"), ("torch", path, "Right")
    by_name = _run(qtbot, win, [ste, right], "RoundSTE")
    # the straight-through round: custom all ones, default (round's derivative) all zeros
    _assert_kept_with_numeric_failed(
        win,
        ste,
        "timeout",
        f"the numeric pass did not finish within {TIMEOUT_S} s; its torch "
        "worker was stopped and replaced",
        f"{path}:{_line(path, 'HANGS HERE')}",
        "surrogate",
        custom=1.0,
        default=0.0,
    )
    assert by_name["RoundSTE"].numeric_failed
    ok = by_name["Right"]  # the queue went on, on the replaced worker
    assert ok.status == "ok" and not ok.numeric_failed
    np.testing.assert_allclose(ok.tensor("x").grads["numeric"], 3.0, rtol=1e-6)
    assert win.state.op_mark(right) == "match"
    assert win.summary.text().startswith("2 ops run, 1 failed — ")
    assert "surrogate" not in win.summary.text()  # RoundSTE's tensors were not checked
    # the whole-run export records the numeric mode's error
    data = export_whole_run_json(win, tmp_path / "run.json", monkeypatch)
    op = next(o for o in data["ops"] if o["qualname"] == "RoundSTE")
    assert op["status"] == "ok" and op["mode_errors"]["numeric"]["kind"] == "timeout"
    assert op["mode_errors"]["numeric"]["where"] == f"{path}:{_line(path, 'HANGS HERE')}"
    x = next(t for t in op["tensors"] if t["name"] == "x")
    assert x["stats"]["numeric"]["raised"] is True and x["stats"]["custom"]["min"] == 1.0
    assert x["stats"]["default"]["max"] == 0.0
    assert "custom is not checked against numeric" in x["explanation"]


def test_numeric_crash_and_raise_keep_custom_and_default_and_fail_the_op(
    qtbot, make_window, write_module
):
    """os._exit in the numeric pass kills the worker; the next op's numeric pass runs in full on
    the new worker (which kept nothing) and raises there: both keep their quick pass."""
    path = write_module("ops.py", OPS_SRC)
    win = make_window([path], {"run/modes": "default,custom,numeric", "run/timeout": 60})
    crash, raises = ("torch", path, "CrashNumeric"), ("torch", path, "RaiseNumeric")
    by_name = _run(qtbot, win, [crash, raises], "CrashNumeric")
    assert by_name["CrashNumeric"].mode_errors["numeric"].kind == "crashed"
    _assert_kept_with_numeric_failed(
        win,
        crash,
        "crashed",
        "the numeric pass crashed its torch worker: user code called "
        "os._exit(3); the worker was replaced",
        None,
        "match",
        custom=2.0,
        default=2.0,
    )
    _assert_kept_with_numeric_failed(
        win,
        raises,
        "error",
        "no float64 here",
        f"{path}:{_line(path, 'RAISES HERE')}",
        "match",
        custom=2.0,
        default=2.0,
    )
    assert win.summary.text() == "2 ops run, 2 failed"
