"""Diagnostics in the window: one entry per problem, a detail pane with message, fix and
file:line, a click selects the op (and its tensor) in the grid, "Open in editor" runs $VISUAL at
the line, and a filter to the selected op."""

import os
import stat
import sys

from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import Qt

from gradviz.app.settings_file import SettingsFile

NAN_SRC = """
import torch

class NanGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        out = g.clone()
        out[:3] = float("nan")
        return out
"""


def _click(qtbot, panel, item):
    panel.list.scrollToItem(item)
    qtbot.mouseClick(
        panel.list.viewport(), Qt.LeftButton, pos=panel.list.visualItemRect(item).center()
    )


def test_diagnostics_entry_detail_selection_editor_and_filter(
    qtbot, make_window, tmp_path, examples_dir, write_module, monkeypatch
):
    traps = str(examples_dir / "traps_torch.py")
    nan = write_module("nan_ops.py", NAN_SRC)
    win = make_window([traps, nan])
    too_many, nan_key = ("torch", traps, "TooManyGrads"), ("torch", nan, "NanGrad")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run([too_many, nan_key])
    panel = win.diagnostics
    win.tabs.setCurrentWidget(panel)
    entries = panel.entries()
    # torch's "incorrect number of gradients" is one entry: GV101, the exception as its detail
    mine = [p for p in entries if p.key == too_many]
    assert [p.code for p in mine] == ["GV101-grad-count"]
    assert "incorrect number of gradients" in mine[0].detail

    # a click: the detail pane says what, how to fix, where; the op is shown in the grid
    win.tree.select_pair(win.state.loaded.pair_name(nan_key))
    gv101 = panel.item_for(mine[0].where)
    _click(qtbot, panel, gv101)
    assert win.tree.current_pair() == win.state.loaded.pair_name(too_many)
    text = panel.detail.toPlainText()
    assert mine[0].message in text and "Fix: " + mine[0].fix in text and mine[0].where in text

    # a finding about a tensor selects that tensor's row too
    nan_entry = next(p for p in panel.entries() if p.key == nan_key and p.tensor)
    _click(
        qtbot,
        panel,
        next(
            panel.list.topLevelItem(i)
            for i in range(panel.list.topLevelItemCount())
            if panel.list.topLevelItem(i).text(2).startswith(f"[{nan_entry.code}]")
        ),
    )
    assert win.tree.current_pair() == win.state.loaded.pair_name(nan_key)
    assert win.grid.rows[nan_entry.tensor].highlighted

    # Open in editor: $VISUAL with +LINE and the file
    args_file = tmp_path / "editor_args.txt"
    editor = tmp_path / "fake_editor.py"
    editor.write_text(
        f"import sys\nopen({str(args_file)!r}, 'w').write('\\n'.join(sys.argv[1:]))\n"
    )
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    _click(qtbot, panel, gv101)
    assert panel.open_button.isEnabled()
    qtbot.mouseClick(panel.open_button, Qt.LeftButton)
    qtbot.waitUntil(args_file.exists, timeout=30_000)
    qtbot.waitUntil(lambda: args_file.read_text().count("\n") == 1, timeout=30_000)
    path, _, line = mine[0].where.rpartition(":")
    assert args_file.read_text().splitlines() == [f"+{line}", path]

    # the filter: only the selected op's entries
    assert {p.key for p in panel.entries()} >= {too_many, nan_key}
    panel.only_selected.setChecked(True)
    assert {p.key for p in panel.entries()} == {too_many}
    win.tree.select_pair(win.state.loaded.pair_name(nan_key))
    assert {p.key for p in panel.entries()} == {nan_key}
    panel.only_selected.setChecked(False)
    assert {p.key for p in panel.entries()} >= {too_many, nan_key}
    assert os.path.exists(traps)


def test_message_column_keeps_room_at_1000x700(qtbot, engine, tmp_path):
    """A long op name no longer takes the whole list at 1000x700: op and where are capped (and
    elided), the message column is in sight with room to read."""
    from gradviz.qt.main_window import MainWindow

    qs = SettingsFile(str(tmp_path / "gradviz.ini"))
    win = MainWindow([], engine=engine, qsettings=qs)  # not started: no worker needed
    qtbot.addWidget(win)
    win.resize(1000, 700)
    win.show()
    panel = win.diagnostics
    win.tabs.setCurrentWidget(panel)
    op = "trap_variable_without_variables_arg (tf) · custom"
    panel.add(
        "error",
        op,
        "TypeError: @tf.custom_gradient grad_fn must accept keyword argument "
        "'variables', since function uses variables",
        "/some/where/traps_tf.py:51",
    )
    qtbot.waitUntil(lambda: panel.list.viewport().width() > 100)
    lst, head = panel.list, panel.list.header()
    avail = lst.viewport().width()
    qtbot.waitUntil(lambda: lst.columnWidth(1) <= max(60, int(avail * 0.3)))
    assert lst.columnWidth(1) < lst.sizeHintForColumn(1)  # the op name is elided
    left = head.sectionViewportPosition(2)
    assert 0 <= left and left + lst.columnWidth(2) <= avail + 1  # the message column is in sight
    assert lst.columnWidth(2) >= 0.3 * avail, (lst.columnWidth(2), avail)
    narrow = lst.columnWidth(1)
    win.resize(1500, 950)  # more room: a wider op column
    qtbot.waitUntil(lambda: lst.columnWidth(1) > narrow)
    assert lst.columnWidth(1) <= max(60, int(lst.viewport().width() * 0.3))


def test_detail_pane_follows_the_selected_op(qtbot, make_window, examples_dir, write_module):
    """Another op selected in the tree: the detail pane shows that op's entry, or is cleared
    when it has none; it never keeps describing the op the user left (filter on or off)."""
    traps = str(examples_dir / "traps_torch.py")
    nan = write_module("nan_ops.py", NAN_SRC)
    win = make_window([traps, nan])
    too_many, nan_key = ("torch", traps, "TooManyGrads"), ("torch", nan, "NanGrad")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run([too_many, nan_key])
    panel = win.diagnostics
    win.tabs.setCurrentWidget(panel)
    loaded = win.state.loaded
    never_run = next(k for k in loaded.ordered_keys() if k not in (too_many, nan_key))
    gv101 = next(p for p in panel.entries() if p.key == too_many)
    nan_first = next(p for p in panel.entries() if p.key == nan_key)
    for only_selected in (False, True):
        panel.only_selected.setChecked(only_selected)
        win.tree.select_pair(loaded.pair_name(too_many))
        _click(qtbot, panel, panel.item_for(gv101.where))
        assert panel.current() == gv101 and gv101.message in panel.detail.toPlainText()
        # another op with entries: its first entry is shown, not the one clicked before
        win.tree.select_pair(loaded.pair_name(nan_key))
        assert panel.current() == nan_first
        text = panel.detail.toPlainText()
        assert nan_first.message in text and gv101.message not in text
        # an op with no entry: the pane is cleared (its placeholder says "Click an entry.")
        win.tree.select_pair(loaded.pair_name(never_run))
        assert panel.current() is None and panel.detail.toPlainText() == ""
        assert panel.detail.placeholderText() == "Click an entry."
        assert not panel.open_button.isEnabled()


def test_detail_pane_stays_on_the_selected_op_when_it_runs_again(
    qtbot, make_window, examples_dir, write_module
):
    """A re-run replaces the op's entries; the list's current row used to move to a neighbour
    (another op's entry), so the pane described trap_too_many_grads while NanGrad was shown."""
    traps = str(examples_dir / "traps_torch.py")
    nan = write_module("nan_ops.py", NAN_SRC)
    win = make_window([traps, nan])
    too_many, nan_key = ("torch", traps, "TooManyGrads"), ("torch", nan, "NanGrad")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run([too_many, nan_key])
    panel = win.diagnostics
    win.tabs.setCurrentWidget(panel)
    win.tree.select_pair(win.state.loaded.pair_name(nan_key))
    win.show_pair(win.state.loaded.pair_name(nan_key))
    first = panel.current()
    assert first is not None and first.key == nan_key
    _click(qtbot, panel, panel.item_for(first.where))
    for _ in range(2):
        with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
            assert win.run([nan_key])
        now = panel.current()
        assert now is not None and now.key == nan_key, now
        assert now.message == first.message and now.message in panel.detail.toPlainText()
        assert all(
            p.key != too_many or p.message not in panel.detail.toPlainText()
            for p in panel.entries()
        )


def test_a_long_at_path_wraps_in_the_detail_pane_at_1000x700(qtbot, engine, tmp_path):
    """The "At:" path and the traceback wrap, breaking anywhere in a long name, so the pane never
    scrolls sideways and file:line is in sight at 1000x700."""
    from gradviz.qt.main_window import MainWindow

    qs = SettingsFile(str(tmp_path / "gradviz.ini"))
    win = MainWindow([], engine=engine, qsettings=qs)  # not started: no worker needed
    qtbot.addWidget(win)
    win.resize(1000, 700)
    win.show()
    panel = win.diagnostics
    win.tabs.setCurrentWidget(panel)
    # one path segment with no break opportunity, wider than the pane
    where = (
        "/home/someone/"
        + "averyveryverylongprojectnamewithoutanyplacetobreak" * 2
        + "/traps_tf.py:51"
    )
    trace = (
        f'Traceback (most recent call last):\n  File "{where[:-3]}", line 51, in grad_fn\n'
        "TypeError: @tf.custom_gradient grad_fn must accept keyword argument 'variables'"
    )
    item = panel.add(
        "error",
        "trap (tf) · custom",
        "TypeError: grad_fn must accept 'variables'",
        where,
        detail=trace,
    )
    qtbot.waitUntil(lambda: panel.detail.viewport().width() > 100)
    _click(qtbot, panel, item)
    detail = panel.detail
    assert "At: " in detail.toPlainText() and "traps_tf.py:51" in detail.toPlainText()
    qtbot.waitUntil(lambda: detail.document().size().width() > 0)
    width = detail.viewport().width()
    assert detail.fontMetrics().horizontalAdvance(where) > width  # too long for one line
    assert detail.document().size().width() <= width + 1, (detail.document().size().width(), width)
    assert detail.horizontalScrollBar().maximum() == 0
