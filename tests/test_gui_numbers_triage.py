"""Triage in the Numbers tab and the run's Worst tensors tab, on real runs in the window (issue
28, item 1): rows sorted worst verdict first (then the larger error), any column sorts by value,
several rows copy as tab-separated text with headers at full precision, a filter keeps the rows
with its words, and Worst tensors lists every op's tensors of the run, a double-click going to
the op and its tensor."""

from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from gradviz.qt.numbers_sort import verdict_rank, worst_error

OPS_SRC = '''
import torch


class Scaled2(torch.autograd.Function):
    """x's gradient right, y's twice too big."""
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, 2 * g * x


class Scaled5(torch.autograd.Function):
    """y's gradient five times too big: the larger error of the two differs."""
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, 5 * g * x


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g
'''


def _run_all(qtbot, make_window, write_module):
    path = write_module("triage_ops.py", OPS_SRC)
    win = make_window([path], {"run/modes": "default,custom,numeric"})
    win.resize(1500, 950)
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run(list(win.state.loaded.ops))
    return win


def _worst_first(verdicts_errors):
    keys = [(verdict_rank(v), e) for v, e in verdicts_errors]
    return keys == sorted(keys, reverse=True)


def test_numbers_sort_worst_first_copy_rows_at_full_precision_and_filter(
    qtbot, make_window, write_module
):
    win = _run_all(qtbot, make_window, write_module)
    win.tree.select_pair("Scaled2")
    win.tabs.setCurrentWidget(win.numbers)
    numbers, t = win.numbers, win.numbers.table
    qtbot.waitUntil(lambda: ("y", "torch") in numbers.rows, timeout=RUN_TIMEOUT_MS)
    # worst verdict first: y (2x) differs, above x and out
    assert numbers.rows[0] == ("y", "torch") and numbers.verdicts[0] == "differs"
    assert set(numbers.verdicts[1:]) == {"match"}
    # any column sorts by its value, not its rounded text
    numbers.sort_by("tensor", Qt.SortOrder.AscendingOrder)
    assert [r[0] for r in numbers.rows] == sorted(r[0] for r in numbers.rows)
    numbers.sort_by("custom~numeric max abs err", Qt.SortOrder.DescendingOrder)
    errs = [numbers.value(n, fw, "custom~numeric max abs err") for n, fw in numbers.rows]
    assert errs == sorted(errs, reverse=True) and numbers.rows[0] == ("y", "torch")
    # the tint follows its row when rows move
    assert numbers.verdicts[0] == "differs"

    # two rows selected, Ctrl+C: headers, then each row's raw numbers at full precision
    t.setFocus()
    t.selectRow(0)
    t.selectionModel().select(
        t.model().index(1, 0),
        t.selectionModel().SelectionFlag.Select | t.selectionModel().SelectionFlag.Rows,
    )
    QApplication.clipboard().clear()
    with qtbot.waitSignal(numbers.copied) as copied:
        qtbot.keyClick(t, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert copied.args == [2]
    text = QApplication.clipboard().text()
    assert text == numbers.copy_text()
    lines = text.rstrip("\n").split("\n")
    shown = [h for c, (h, _s, _k) in enumerate(numbers._cols) if not t.isColumnHidden(c)]
    assert lines[0].split("\t") == shown and len(lines) == 3
    cells = dict(zip(shown, lines[1].split("\t")))
    assert (cells["tensor"], cells["fw"], cells["verdict"]) == ("y", "torch", "differs")
    exact = numbers.value("y", "torch", "custom~numeric max abs err")
    assert float(cells["custom~numeric max abs err"]) == exact  # not the 4-digit text
    assert cells["custom~numeric max abs err"] == repr(exact)

    # the shown table's filter box sits beside the tabs, whole inside the window
    box = numbers.filter
    assert box.isVisible() and not win.worst.filter.isVisible()
    left = box.mapTo(win, box.rect().topLeft()).x()
    assert 0 <= left and left + box.width() <= win.width()
    # the filter keeps the rows with every word; cleared, all rows again
    numbers.filter.setText("differs torch")
    assert numbers.shown_keys() == [("", "y", "torch")]
    numbers.filter.setText("")
    assert len(numbers.shown_keys()) == len(numbers.rows) == 3


def test_worst_tensors_lists_every_op_worst_first_and_goes_to_one(qtbot, make_window, write_module):
    win = _run_all(qtbot, make_window, write_module)
    worst = win.worst
    qtbot.waitUntil(lambda: len(worst.rows) == 8, timeout=RUN_TIMEOUT_MS)  # 3 + 3 + 2 tensors
    assert {k[0] for k in worst.keys} == {"Scaled2", "Scaled5", "Square"}
    # the two differs first, the 5x error above the 2x one, then the matches
    assert worst.keys[:2] == [("Scaled5", "y", "torch"), ("Scaled2", "y", "torch")]
    assert worst.verdicts[:2] == ["differs", "differs"] and set(worst.verdicts[2:]) == {"match"}
    comps = {
        win.state.loaded.pair_name(k): a.comparison for k, a in win.state.results.analyses().items()
    }
    pairs = []
    for op, tensor, _fw in worst.keys:
        tc = next(t for t in comps[op].tensors if t.name == tensor)
        pairs.append((tc.verdict, worst_error(tc)))
    assert _worst_first(pairs)
    # the filter works here too: one op's rows
    win.tabs.setCurrentWidget(worst)
    assert worst.filter.isVisible() and not win.numbers.filter.isVisible()
    worst.filter.setText("square")
    assert [k[0] for k in worst.shown_keys()] == ["Square", "Square"]
    worst.filter.setText("")
    # double-click a row: its op is shown, its tensor highlighted
    r = worst.keys.index(("Scaled5", "y", "torch"))
    item = worst.table.item(r, 0)
    worst.table.itemActivated.emit(item)
    assert win.tree.current_pair() == "Scaled5"
    assert win.grid.rows["y"].highlighted
