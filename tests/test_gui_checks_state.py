"""The Checks tab says what happened in the last run (issue 28, item 3), on a real window with
real workers: an op whose plain run raised reads "not run" with its error (it read "pending"
after the run), a cancel leaves "cancelled" cells, a count that agrees with them and a detail
pane of this run (it read "(9 failed)" over pending cells and an old pass), a later run without
checks empties its rows, and a failed check changes the op's mark in the tree."""

import threading
from pathlib import Path

import pytest
from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402

OPS = Path(__file__).resolve().parent / "corpus" / "checks" / "torch_ops.py"

RAISES_SRC = """
import torch


class Raises(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        raise ValueError("my backward is broken")
"""


def key(name, path=OPS):
    return ("torch", str(path), name)


def _cells_agree(window):
    """The tab's count is the number of cells that say fail."""
    m = window.checks_matrix
    fails = sum(m.status(k, n) == "fail" for k in m.rows for n in ("double_backward", "precision"))
    title = window.tabs.tabText(window.tabs.indexOf(m))
    assert title == (f"Checks ({fails} failed)" if fails else "Checks"), title
    return fails


def _run(qtbot, window, keys):
    with qtbot.waitSignal(window.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert window.run(keys)
    return done.args[0]


@pytest.fixture
def window(make_window, write_module):
    raises = write_module("raises_torch.py", RAISES_SRC)
    win = make_window(
        [str(OPS), raises],
        {"run/modes": "default,custom", "run/checks": "double_backward,precision"},
    )
    win.raises = raises
    return win


def test_a_failed_check_marks_the_op_and_a_raised_run_reads_not_run(qtbot, window):
    m, tree = window.checks_matrix, window.tree
    raised = key("Raises", window.raises)
    _run(qtbot, window, [key("Cube"), key("CubeOnce"), raised])
    # CubeOnce's gradient matches, its double backward fails: the tree says so, not a tick
    assert m.status(key("CubeOnce"), "double_backward") == "fail"
    glyph, _colour, tip = tree.shown_mark(key("CubeOnce"))
    assert glyph == "≠" and "contract checks failed: double_backward" in tip
    assert tree.shown_mark(key("Cube"))[0] == "✓"
    assert window.state.op_mark(key("CubeOnce")) == "differs"
    # the op whose plain run raised: its chosen checks were not run, and say why
    assert [m.status(raised, n) for n in ("double_backward", "precision")] == ["not run"] * 2
    assert m.status(raised, "vmap") is None
    assert m.cell_text(raised, "precision") == "○ not run"
    m.choose(raised, "precision")
    assert "not run" in m.detail.text() and "my backward is broken" in m.detail.text()
    assert _cells_agree(window) == 1


def test_cancel_and_a_run_without_checks_leave_no_stale_cells(qtbot, window, engine, monkeypatch):
    m = window.checks_matrix
    keys = [key("Cube"), key("CubeOnce")]
    _run(qtbot, window, keys)
    assert _cells_agree(window) == 1
    m.choose(key("Cube"), "double_backward")
    assert "pass" in m.detail.text()
    # a second run, cancelled (Esc right after Ctrl+R) before its run thread reaches the
    # engine: that cancel was lost (run_passes clears its stop flag) and the batch ran whole
    real_run, gate = engine.run_passes, threading.Event()
    monkeypatch.setattr(engine, "run_passes", lambda *a, **kw: gate.wait(60) and real_run(*a, **kw))
    with qtbot.waitSignal(window.runDone, timeout=RUN_TIMEOUT_MS):
        assert window.run(keys)
        # pending at the start, the count with them, the detail of this run, not the old pass
        assert m.status(key("Cube"), "double_backward") == "pending"
        assert _cells_agree(window) == 0
        assert "running after the plain results" in m.detail.text()
        window.cancel()
        gate.set()
    monkeypatch.setattr(engine, "run_passes", real_run)
    for k in keys:
        assert [m.status(k, n) for n in ("double_backward", "precision")] == ["cancelled"] * 2
    assert _cells_agree(window) == 0
    assert "cancelled" in m.detail.text() and "pass" not in m.detail.text()
    # a run without checks: these ops' rows hold nothing of an earlier run
    window.settings_panel.checks["double_backward"].setChecked(False)
    window.settings_panel.checks["precision"].setChecked(False)
    _run(qtbot, window, keys)
    for k in keys:
        assert [m.status(k, n) for n in ("double_backward", "precision")] == [None, None]
    assert _cells_agree(window) == 0
    assert "not chosen for the last run" in m.detail.text()
