"""Issue 28 item 7, the small ones, on the real window: Ctrl+F focuses a filter (the op list's,
or the table's the focus is in), and a plot's menu has no pyqtgraph "Export…" (its "Matplotlib
Window" is broken; File ▸ Export draws what the window shows), and File ▸ Open selects the new
file's first op."""

import numpy as np
from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMenu


def test_ctrl_f_focuses_the_filter_in_front(qtbot, make_window, examples_dir):
    win = make_window([str(examples_dir / "tutorial_torch.py")])
    win.activateWindow()
    win.tree.setFocus()
    qtbot.waitUntil(win.tree.hasFocus)
    win.op_filter.setText("mul")
    qtbot.keyClick(win.tree, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is win.op_filter)
    assert win.op_filter.selectedText() == "mul"  # typing replaces the old filter
    win.tabs.setCurrentWidget(win.worst)
    win.worst.table.setFocus()
    qtbot.keyClick(win.worst.table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is win.worst.filter)


def test_a_plots_menu_has_no_pyqtgraph_export(qtbot, make_window, examples_dir):
    win = make_window([str(examples_dir / "tutorial_torch.py")])
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run(win.state.loaded.keys_of("round_ste"))
    win.tree.select_pair("round_ste")
    row = win.grid.rows["x"]
    slot = row.plots[0]
    centre = row.canvas.mapFromScene(slot.item.vb.sceneBoundingRect().center())
    qtbot.mouseClick(row.canvas.viewport(), Qt.MouseButton.RightButton, pos=centre)
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    menu = QApplication.activePopupWidget()

    def texts(m):
        for a in m.actions():
            yield a.text()
            if a.menu() is not None:
                yield from texts(a.menu())

    shown = list(texts(menu))
    menu.close()
    assert "View All" in shown  # the plot's own menu, still there
    assert "Export…" not in shown and "Export..." not in shown, shown  # pyqtgraph's
    assert "Export this plot…" in shown  # gradviz's own, what File ▸ Export draws


def test_file_open_selects_the_new_files_first_op(qtbot, make_window, examples_dir, write_module):
    win = make_window([str(examples_dir / "tutorial_torch.py")])
    win.tree.select_pair("round_ste")
    path = write_module(
        "opened_torch.py",
        """
import torch


class Second(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return 2 * g


class First(torch.autograd.Function):
    pass
""",
    )
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        win.open_files([path])  # as File ▸ Open does
    assert win.tree.current_pair() == "Second"  # the file's only op (First has no backward)
    assert "Second" in win.pair_label.text()  # the grid shows it, not round_ste any more


SCALAR_SRC = """
import torch


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
        return x * self.scale
"""


def test_a_scalar_gradient_reads_as_a_number(qtbot, make_window, write_module):
    """Issue 28 item 6: a shape () parameter's gradient is written out in its cells (it was a
    one-point plot to guess from); the difference view says the difference."""
    from gradviz.plots.panels import scalar_text

    path = write_module("scalar_torch.py", SCALAR_SRC)
    win = make_window([path], {"run/modes": "default,custom"})
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert win.run([("torch", path, "Scale")])
    win.tree.select_pair("Scale")
    res = done.args[0][0]
    grads = res.tensor("scale").grads
    row = win.grid.rows["scale"]
    notes = {(c.framework, c.mode): c.message for c in row.cells}
    for mode in ("default", "custom"):
        assert notes[("torch", mode)] == f"∂loss/∂scale = {scalar_text(grads[mode])}"
        # the float32 gradient, read back exactly from what the cell says
        assert np.float32(float(scalar_text(grads[mode]))) == grads[mode]
    assert not any(c.has_data for c in row.cells)
    win.grid.set_view("scale", "difference")
    notes = [c.message for c in win.grid.rows["scale"].cells]
    assert notes and notes[0] == f"custom − default = {scalar_text(0.0)}"
