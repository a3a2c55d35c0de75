"""Nothing lost on cancel (issue 13): an op whose quick pass (custom, default) came back and whose
numeric pass is then cancelled (Cancel all) or skipped (Skip this op) keeps custom and default in
the grid; the numeric column, the Numbers table, Diagnostics and the JSON export say numeric was
cancelled, and the op keeps the cancelled mark: custom ≈ default without numeric is no green ✓."""

import pytest

pytest.importorskip("pytestqt")

import numpy as np  # noqa: E402
from gui_helpers import RUN_TIMEOUT_MS, export_whole_run_json, torch_cell  # noqa: E402

from gradviz.app.results import PARTIAL  # noqa: E402

pytestmark = pytest.mark.gui


# The numeric pass runs the op in float64 (the quick pass in float32): there it hangs.
OPS_SRC = """
import time
import torch

class SlowNumeric(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.dtype == torch.float64:
            time.sleep(3600)
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


def _numeric_pass_running(qtbot, win, key):
    """Wait until `key`'s partial result is drawn and its worker runs its numeric pass."""
    qtbot.waitUntil(
        lambda: (
            win.state.results.stage(key) == PARTIAL
            and win.state.in_flight() == [key]
            and "x" in win.grid.rows
            and win.grid.rows["x"].cells
            and any(c.has_data for c in win.grid.rows["x"].cells)
        ),
        timeout=RUN_TIMEOUT_MS,
    )


def _assert_kept_with_numeric_cancelled(win, key, why):
    """Custom and default shown, numeric said cancelled everywhere the window speaks of it."""
    res = win.state.results.result(key)
    assert res.status == "ok" and not res.partial and res.numeric_cancelled
    assert res.mode_errors["numeric"].message == f"the numeric pass was {why} before it finished"
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], 2.0)
    np.testing.assert_array_equal(res.tensor("x").grads["default"], 2.0)
    assert "numeric" not in res.tensor("x").grads
    # the mark: cancelled, not the verdict of custom ≈ default
    assert win.state.progress.states[key] == "cancelled"
    assert win.state.op_mark(key) == "cancelled" and win.tree.shown_mark(key)[0] == "⊘"
    # the grid: custom and default drawn, numeric says it was cancelled (not "computing…")
    win.show_pair("SlowNumeric")
    assert win.grid.message() == "" and {"x", "out"} <= set(win.grid.rows)
    assert torch_cell(win, "x", "custom").has_data and torch_cell(win, "x", "default").has_data
    numeric = torch_cell(win, "x", "numeric")
    assert not numeric.has_data and not numeric.slot.waiting()
    assert (
        numeric.message
        == f"numeric: the numeric pass was {why} before it finished (▶ Run computes it)"
    )
    assert "torch: match, numeric cancelled" in win.grid.rows["x"].verdicts.text()
    assert "torch: match<" not in win.grid.rows["x"].verdicts.text()
    # the Numbers table
    nt = win.numbers
    assert nt.text("x", "torch", "verdict") == "match, numeric cancelled"
    assert nt.text("x", "torch", "numeric min") == "cancelled"
    assert nt.value("x", "torch", "custom min") == pytest.approx(2.0)
    assert "custom is not checked against numeric" in nt.text("x", "torch", "explanation")
    # Diagnostics: one entry that says what is missing, not an error
    entries = [p for p in win.diagnostics.entries() if p.key == key]
    cancelled = [p for p in entries if "numeric" in p.op]
    assert len(cancelled) == 1 and cancelled[0].severity == "info"
    assert cancelled[0].message.startswith(
        f"numeric: the numeric pass was {why} before it finished"
    )
    assert not [p for p in entries if p.severity == "error"]


def test_cancel_all_in_the_numeric_pass_keeps_custom_and_default(
    qtbot, make_window, write_module, tmp_path, monkeypatch
):
    path = write_module("ops.py", OPS_SRC)
    win = make_window([path], {"run/modes": "default,custom,numeric", "run/timeout": 90})
    key = ("torch", path, "SlowNumeric")
    win.tree.select_pair("SlowNumeric")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run([key])
        _numeric_pass_running(qtbot, win, key)
        assert win.state.op_mark(key) == "running"
        win.cancel()
    (res,) = done.args[0]
    assert res.numeric_cancelled and res.status == "ok"
    _assert_kept_with_numeric_cancelled(win, key, "cancelled")
    assert win.summary.text() == "1 op run, 1 cancelled"
    # the whole-run export says the same
    data = export_whole_run_json(win, tmp_path / "run.json", monkeypatch)
    (op,) = data["ops"]
    assert op["status"] == "ok" and op["mode_errors"]["numeric"]["kind"] == "cancelled"
    x = next(t for t in op["tensors"] if t["name"] == "x")
    assert x["stats"]["numeric"]["cancelled"] is True and x["stats"]["custom"]["min"] == 2.0
    assert "custom is not checked against numeric" in x["explanation"]
    assert x["numeric_unchecked"] is True
    assert (
        data["summary"]["numeric_unchecked"]
        == sum(t["verdict"] in ("match", "surrogate") for t in op["tensors"])
        > 0
    )


def test_skip_in_the_numeric_pass_keeps_custom_and_default_and_goes_on(
    qtbot, make_window, write_module
):
    path = write_module("ops.py", OPS_SRC)
    win = make_window([path], {"run/modes": "default,custom,numeric", "run/timeout": 90})
    slow, right = ("torch", path, "SlowNumeric"), ("torch", path, "Right")
    win.tree.select_pair("SlowNumeric")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run([slow, right])
        _numeric_pass_running(qtbot, win, slow)
        win.act_skip.trigger()
    by_name = {r.request.qualname: r for r in done.args[0]}
    assert by_name["SlowNumeric"].numeric_cancelled
    ok = by_name["Right"]  # the queue went on, numeric and all
    assert ok.status == "ok" and not ok.numeric_cancelled
    np.testing.assert_allclose(ok.tensor("x").grads["numeric"], 3.0, rtol=1e-6)
    assert win.state.op_mark(right) == "match"
    _assert_kept_with_numeric_cancelled(win, slow, "skipped by the user")
    assert win.summary.text().startswith("2 ops run, 1 cancelled — ")
