"""What the numbers and parity tables say where a gradient is missing, on real runs in the
window: a mode that raised reads "error" (not "absent": absent means the framework returned no
gradient), and a parity row where one side is absent has no error number ("—"), since a 0
measured against zeros would contradict its `differs`."""

from gui_helpers import RUN_TIMEOUT_MS

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


def _run_pair(qtbot, win, pair):
    keys = win.state.loaded.keys_of(pair)
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run(keys)
    win.tree.select_pair(pair)
    return keys


def test_a_mode_that_raised_reads_error_and_absent_stays_absent(
    qtbot, make_window, write_module, examples_dir
):
    raises = write_module("raises.py", RAISES_SRC)
    win = make_window([raises, str(examples_dir / "tutorial_tf.py")])
    _run_pair(qtbot, win, "Raises")
    numbers = win.numbers
    qtbot.waitUntil(lambda: ("x", "torch") in numbers.rows, timeout=RUN_TIMEOUT_MS)
    assert numbers.text("x", "torch", "custom min") == "error"
    assert numbers.text("x", "torch", "custom max") == "—"
    assert numbers.text("x", "torch", "default min") == "1"  # d(x*1)/dx, the mode that ran
    cell = numbers.table.item(
        numbers.rows.index(("x", "torch")), [c[0] for c in numbers._cols].index("custom min")
    )
    assert "my backward is broken" in cell.toolTip()
    # TF registers no gradient for tf.round: its default returned None, which is absent
    _run_pair(qtbot, win, "round_ste")
    qtbot.waitUntil(lambda: ("x", "tf") in numbers.rows, timeout=RUN_TIMEOUT_MS)
    assert numbers.text("x", "tf", "default min") == "absent"


def test_parity_row_with_one_side_absent_has_no_error_number(qtbot, make_window, examples_dir):
    win = make_window([str(examples_dir / f"tutorial_{fw}.py") for fw in ("torch", "tf")])
    _run_pair(qtbot, win, "round_ste")
    parity = win.numbers.parity
    heads = [parity.horizontalHeaderItem(c).text() for c in range(parity.columnCount())]

    def row(tensor, mode):
        for r in range(parity.rowCount()):
            cells = {h: parity.item(r, c).text() for c, h in enumerate(heads)}
            if (cells["tensor"], cells["mode"]) == (tensor, mode):
                return cells
        return None

    qtbot.waitUntil(lambda: row("x", "default") is not None, timeout=RUN_TIMEOUT_MS)
    # TF None against torch's zeros: differs, and no "0" beside it
    default = row("x", "default")
    assert default["verdict"] == "differs" and "absent is not zero" in default["note"]
    assert default["max abs err"] == "—"
    # both sides have a gradient: the number is there (the same identity gradient: 0)
    custom = row("x", "custom")
    assert custom["verdict"] == "match" and custom["max abs err"] == "0"


def test_the_comparisons_are_in_sight_without_scrolling(qtbot, make_window, examples_dir):
    """How far custom is from numeric and default comes right after the verdict: with the
    per-mode statistics first (~27 columns) it was off-screen to the right at 1500x950."""
    from PySide6.QtWidgets import QApplication

    win = make_window(
        [str(examples_dir / "tutorial_torch.py")], {"run/modes": "default,custom,numeric"}
    )
    win.resize(1500, 950)
    _run_pair(qtbot, win, "round_ste")
    win.show_pair("round_ste")
    win.tabs.setCurrentWidget(win.numbers)
    numbers = win.numbers
    qtbot.waitUntil(lambda: ("x", "torch") in numbers.rows, timeout=RUN_TIMEOUT_MS)
    QApplication.processEvents()
    t = numbers.table
    heads = [c[0] for c in numbers._cols]
    assert heads[:5] == ["tensor", "fw", "verdict", "shape", "custom~default max abs err"]
    for head in ("verdict", "custom~default max abs err", "custom~numeric max abs err"):
        c = heads.index(head)
        right = t.columnViewportPosition(c) + t.columnWidth(c)
        assert 0 <= t.columnViewportPosition(c) and right <= t.viewport().width(), head
    assert numbers.text("x", "torch", "custom~numeric max abs err") == "1"  # the STE's gap
    # numeric is 0 at every element there: the relative error is the gap itself, not 1/atol (1000)
    assert numbers.text("x", "torch", "custom~numeric max rel err") == "1"
