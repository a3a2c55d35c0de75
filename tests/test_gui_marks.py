"""The op tree shows each op's and each file's worst verdict (icon and colour), not a green tick
for "did not raise"; the status bar counts cancelled runs apart from failed ones."""

import pytest
from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402

from gradviz.qt.theme import OP_MARKS

OPS_SRC = """
import time
import torch

class Right(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0

class Wrong(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 3.0

class Raises(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        raise ValueError("my backward is broken")

class Hangs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        time.sleep(3600)
        return x

    @staticmethod
    def backward(ctx, g):
        return g
"""

GOOD_SRC = OPS_SRC.split("class Wrong")[0]


@pytest.fixture
def window(make_window, write_module):
    ops = write_module("ops.py", OPS_SRC)
    good = write_module("good.py", GOOD_SRC)
    return make_window([ops, good]), ops, good


def _run(qtbot, win, keys):
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run(keys)
    return done.args[0]


def test_tree_marks_show_the_worst_verdict_of_each_op_and_file(qtbot, window):
    win, ops, good = window
    right, wrong, raises = (("torch", ops, n) for n in ("Right", "Wrong", "Raises"))
    good_right = ("torch", good, "Right")
    results = _run(qtbot, win, [right, wrong, raises, good_right])
    assert [r.status for r in results] == ["ok", "ok", "error", "ok"]
    tree = win.tree
    glyph, color, tip = tree.shown_mark(right)
    assert (glyph, color) == OP_MARKS["match"] and "x: match" in tip
    # Wrong did not raise, but its custom gradient (3) is not the default's (2): not a tick
    glyph, color, tip = tree.shown_mark(wrong)
    assert (glyph, color) == OP_MARKS["differs"] and glyph != "✓" and "x: differs" in tip
    assert tree.shown_mark(raises)[:2] == OP_MARKS["error"]
    # a file shows its worst op; a file of matching ops shows the match mark
    glyph, color, tip = tree.shown_mark(ops)
    assert (glyph, color) == OP_MARKS["error"] and "error" in tip
    assert tree.shown_mark(good)[:2] == OP_MARKS["match"]
    assert "1 failed" in win.summary.text() and "cancelled" not in win.summary.text()

    # the failing op fixed by hand-picking only the good ones: the file's mark follows its ops
    _run(qtbot, win, [right])
    assert tree.shown_mark(ops)[:2] == OP_MARKS["error"]  # Raises still failed last time


def test_status_bar_counts_cancelled_apart_from_failed(qtbot, window):
    win, ops, _good = window
    hangs, raises = ("torch", ops, "Hangs"), ("torch", ops, "Raises")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run([raises, hangs])
        qtbot.waitUntil(
            lambda: win.state.progress.states.get(hangs) == "running", timeout=RUN_TIMEOUT_MS
        )
        assert win.tree.shown_mark(hangs)[:2] == OP_MARKS["running"]
        win.cancel()
    statuses = {r.request.qualname: r.error.kind for r in done.args[0]}
    assert statuses == {"Raises": "error", "Hangs": "cancelled"}
    text = win.summary.text()
    assert "1 failed" in text and "1 cancelled" in text
    assert win.tree.shown_mark(hangs)[:2] == OP_MARKS["cancelled"]
    assert win.tree.shown_mark(raises)[:2] == OP_MARKS["error"]


def test_a_file_whose_only_problem_is_a_cancelled_op_is_not_ticked(qtbot, window):
    win, ops, _good = window
    right, hangs = ("torch", ops, "Right"), ("torch", ops, "Hangs")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run([right, hangs])
        qtbot.waitUntil(
            lambda: win.state.progress.states.get(hangs) == "running", timeout=RUN_TIMEOUT_MS
        )
        win.cancel()
    assert win.tree.shown_mark(right)[:2] == OP_MARKS["match"]
    assert win.tree.shown_mark(hangs)[:2] == OP_MARKS["cancelled"]
    # Hangs was never checked: the file says cancelled, not the ✓ of its one checked op
    glyph, color, tip = win.tree.shown_mark(ops)
    assert (glyph, color) == OP_MARKS["cancelled"] and "✓" not in glyph and "cancelled" in tip


def test_a_match_with_an_error_finding_is_flagged_not_a_plain_tick(
    qtbot, make_window, examples_dir
):
    """trap_call_returns_grad_fn: its grad_fn is never registered, so custom is TF's own gradient
    and x "matches"; GV603 (error) says so. The walkthrough found a plain green tick on it."""
    from gradviz.qt.theme import severity_color

    win = make_window([str(examples_dir / "traps_tf.py")], {"run/modes": "default,custom,numeric"})
    key = next(
        k
        for k in win.state.loaded.ops
        if win.state.loaded.pair_name(k) == "trap_call_returns_grad_fn"
    )
    _run(qtbot, win, [key])
    assert win.state.op_mark(key) == "match"  # the verdict itself is unchanged
    glyph, color, tip = win.tree.shown_mark(key)
    assert glyph == OP_MARKS["match"][0] + "!" and color == severity_color("error")
    assert "worst: match" in tip and "Diagnostics (error): GV603-call-returns-grad-fn" in tip


def test_custom_alone_without_numeric_is_marked_unchecked_not_ticked(
    qtbot, make_window, write_module
):
    """modes: custom only. Wrong's backward (3, not 2) was compared with nothing: the tree says
    ? (unchecked) for the op and its file, never the ✓ it showed as a 'match'."""
    ops = write_module("ops.py", OPS_SRC)
    win = make_window([ops], {"run/modes": "custom"})
    wrong = ("torch", ops, "Wrong")
    [res] = _run(qtbot, win, [wrong])
    assert res.tensor("x").grads["custom"].tolist() == [3.0] * 200
    glyph, color, tip = win.tree.shown_mark(wrong)
    assert (glyph, color) == OP_MARKS["unchecked"] and glyph != "✓" and "x: unchecked" in tip
    assert win.tree.shown_mark(ops)[:2] == OP_MARKS["unchecked"]
    assert "2 unchecked" in win.summary.text()


def test_an_op_name_cut_in_a_narrow_tree_is_whole_in_its_tooltip(make_window, examples_dir):
    """At 1000x700 the tree cuts 'AssignWeights → trap_assign_weights'; its tooltip starts with
    the whole name (it gave the kind and the pair only)."""
    win = make_window([str(examples_dir / "traps_tf.py")])
    tree = win.tree
    items = [
        tree.topLevelItem(i).child(j)
        for i in range(tree.topLevelItemCount())
        for j in range(tree.topLevelItem(i).childCount())
    ]
    [item] = [it for it in items if it.text(0).startswith("AssignWeights")]
    assert item.toolTip(0).startswith("AssignWeights (layer) · pairs as 'trap_assign_weights'")
