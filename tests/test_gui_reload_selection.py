"""Issue 28 item 7 on the real window (offscreen, real workers, the file watcher): a save with a
syntax error no longer sends the window to another file's first op for good: it stays at the
broken file, the grid says why its op is gone, and once the fix is saved that op is shown
again; the status bar after each hot reload counts every loaded file, not the reloaded one."""

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS, run_keys  # noqa: E402

pytestmark = pytest.mark.gui

SRC = """
import torch


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return 2 * g
"""


def test_a_syntax_error_keeps_the_selection_until_the_fix(
    qtbot, make_window, write_module, examples_dir
):
    path = write_module("twice_torch.py", SRC)
    win = make_window([str(examples_dir / "tutorial_torch.py"), path], {"run/watch": "true"})
    run_keys(qtbot, win, win.state.loaded.keys_of("Twice"))
    win.tree.select_pair("Twice")
    assert win.tree.current_pair() == "Twice"
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        write_module("twice_torch.py", SRC + "\ndef (:\n")  # saved broken
    assert path in win.state.loaded.errors
    assert win.tree.current_pair() is None  # not another file's op
    assert win.tree.currentItem().toolTip(0) == path  # its file's line
    assert "Twice: twice_torch.py did not load (SyntaxError" in win.grid.message()
    assert win.summary.text() == "2 file(s), 3 op(s)"  # every loaded file
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        write_module("twice_torch.py", SRC)  # the fix
    assert win.tree.current_pair() == "Twice"
    assert "Twice" in win.pair_label.text()
