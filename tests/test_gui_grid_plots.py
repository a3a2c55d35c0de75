"""What the grid's plots say (issue 13 items 6 and 7, real window offscreen, real workers):
gradient-vs-input as dots, axis labels and the legend as in the export, a heatmap colour bar
with whole-number ticks, compact tick labels at 10^6, a difference view (custom − default and
custom − numeric, element by element, exported too); a gradient of the wrong shape says so in its
cell, and the numeric column never shows another pass's error."""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import FakeDialogs, keys_of, run_keys, shown_round_ste  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gradviz.plots.ticks import fmt  # noqa: E402
from gradviz.qt import export_actions as EA  # noqa: E402

pytestmark = pytest.mark.gui
SVG_NS = "{http://www.w3.org/2000/svg}"

WRONG_SHAPE_TORCH = """
import torch


class WrongShape(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g[:3] * 2          # three values for a (200,) input
"""


def _cells(grid, tensor):
    return {(c.framework, c.mode): c for c in grid.rows[tensor].cells}


@pytest.fixture
def ste(qtbot, make_window, settings, examples_dir):
    files = [examples_dir / "tutorial_torch.py", examples_dir / "tutorial_tf.py"]
    return shown_round_ste(qtbot, make_window, settings, files)


def test_vs_input_dots_labels_legend_and_compact_ticks(ste):
    grid = ste.grid
    grid.set_view("x", "vs_input")
    custom = _cells(grid, "x")[("torch", "custom")]
    (item,) = [i for i in custom.plot.listDataItems() if i.xData is not None and len(i.xData) > 2]
    assert item.opts["pen"] is None and item.opts["symbol"] == "o"  # dots, no zig-zag
    assert custom.plot.getAxis("bottom").labelText == "value of x"
    assert custom.plot.getAxis("left").labelText == "∂loss/∂x"
    header = grid.header.text()
    assert "custom" in header and "numeric" in header and "default" in header
    # tick labels as the export writes them: 2e5, not 200000 running into 400000
    axis = custom.plot.getAxis("bottom")
    assert axis.tickStrings([0, 200_000, 400_000, 1_000_000], 1.0, 200_000) == [
        "0",
        "2e5",
        "4e5",
        "1e6",
    ]
    # and at 40,000 elements (the stack graph's 200x200 weights): not "1e+04" running into "2e+04"
    assert axis.tickStrings([0, 10_000, 20_000, 30_000], 1.0, 10_000) == ["0", "1e4", "2e4", "3e4"]
    assert axis.tickStrings([1234, 9999], 1.0, 1) == ["1234", "9999"]


def test_difference_view_is_custom_minus_other_and_is_exported(ste, tmp_path):
    grid = ste.grid
    grid.set_view("x", "difference")
    cells = _cells(grid, "x")
    assert list(cells) == [
        ("torch", "custom−default"),
        ("torch", "custom−numeric"),
        ("tf", "custom−default"),
        ("tf", "custom−numeric"),
    ]
    torch_r = grid.results["torch"].tensor("x")
    want = torch_r.grads["custom"].astype(np.float64) - torch_r.grads["default"].astype(np.float64)
    d = cells[("torch", "custom−default")]
    assert d.has_data and d.data["n"] == 200
    np.testing.assert_array_equal(d.data["y"], want)  # element by element
    # round's default gradient is zero and the straight-through custom one is the upstream (ones)
    np.testing.assert_array_equal(d.data["y"], np.ones(200))
    assert not cells[("tf", "custom−default")].has_data  # TF: round has no gradient
    assert "no gradient" in cells[("tf", "custom−default")].message
    dlg = FakeDialogs()
    path = EA.grid_image(ste.exports, path=str(tmp_path / "diff.svg"), dialogs=dlg)
    assert path and not dlg.errors
    texts = [(t.text or "").strip() for t in ET.parse(path).getroot().iter(SVG_NS + "text")]
    # a title is its framework, then the rest (two colours)
    assert "· custom − default" in texts and "· custom − numeric" in texts
    assert {"torch", "tf"} <= set(texts)
    assert any(t.startswith("max |custom − default| = 1") for t in texts)
    # a difference of ~1e-9 is labelled as the export labels it ("1e-9"), not "1" on an axis
    # pyqtgraph titled "(x1e-09)"
    grid.set_view("out", "difference")
    axis = _cells(grid, "out")[("torch", "custom−numeric")].plot.getAxis("left")
    lo, hi = axis.range
    assert max(abs(lo), abs(hi)) < 1e-3
    values = [v for _spacing, vs in axis.tickValues(lo, hi, axis.height()) for v in vs]
    assert values and axis.tickStrings(values, axis.scale, 1) == [fmt(v) for v in values]
    assert axis.scale == 1.0 and "(x" not in axis.labelString()


def test_heatmap_has_a_colour_bar_and_whole_number_ticks(qtbot, ste):
    ste.settings_panel.shape.setText("4x50")
    run_keys(qtbot, ste, keys_of(ste, "round_ste"))
    ste.show_pair("round_ste")
    grid = ste.grid
    grid.set_view("x", "heatmap")
    QApplication.processEvents()
    cell = _cells(grid, "x")[("torch", "custom")]
    assert cell.slot.colorbar is not None
    lo, hi = cell.slot.colorbar.levels()
    assert lo == -hi and hi == pytest.approx(1.0, rel=0.2)  # shared, symmetric levels
    for ax in ("left", "bottom"):
        axis = cell.plot.getAxis(ax)
        ticks = [
            v
            for _, vs in axis.tickValues(
                *axis.range, axis.height() if ax == "left" else axis.width()
            )
            for v in vs
        ]
        assert ticks and all(float(v).is_integer() for v in ticks), (ax, ticks)
    grid.set_view("x", "values")  # the bar goes with the view
    assert _cells(grid, "x")[("torch", "custom")].slot.colorbar is None


def test_wrong_shape_says_so_in_its_cell(qtbot, make_window, settings, examples_dir):
    settings.setValue("run/modes", "default,custom,numeric")
    win = make_window([str(examples_dir / "traps_tf.py")])
    run_keys(qtbot, win, keys_of(win, "trap_wrong_grad_shape"))
    win.tree.select_pair("trap_wrong_grad_shape")
    win.show_pair("trap_wrong_grad_shape")
    custom = _cells(win.grid, "x")[("tf", "custom")]
    assert not custom.has_data  # not one dot that looks like a value
    assert custom.message.startswith("shape () vs (200,)"), custom.message
    for view in ("scatter", "difference"):
        win.grid.set_view("x", view)
        pair = _cells(win.grid, "x")[
            ("tf", "custom~default" if view == "scatter" else "custom−default")
        ]
        assert not pair.has_data and pair.message.startswith("shape () vs (200,)")


def test_numeric_column_never_shows_the_custom_backwards_error(
    qtbot, make_window, settings, write_module
):
    settings.setValue("run/modes", "default,custom,numeric")
    win = make_window([write_module("wrong_shape.py", WRONG_SHAPE_TORCH)])
    (res,) = run_keys(qtbot, win, keys_of(win, "WrongShape"))
    assert res.status == "error" and "invalid gradient" in res.error.message
    win.tree.select_pair("WrongShape")
    win.show_pair("WrongShape")
    cells = _cells(win.grid, "x")
    assert cells[("torch", "default")].has_data
    custom = cells[("torch", "custom")]
    assert (
        custom.message.startswith("custom raised RuntimeError")
        and "invalid gradient" in custom.message
    )
    numeric = cells[("torch", "numeric")]
    assert not numeric.has_data
    assert "invalid gradient" not in numeric.message and "WrongShapeBackward" not in numeric.message
    assert re.match(r"numeric not computed", numeric.message), numeric.message


def test_long_notes_wrap_inside_their_plot_and_keep_every_word(qtbot):
    """A long error and a 10^6-element info line are wrapped to the plot, never cut off."""
    from dataclasses import replace

    from samples import ste_result

    from gradviz.model import MODES, ErrorInfo
    from gradviz.qt.grid import GridView

    grid = GridView()
    qtbot.addWidget(grid)
    grid.resize(1000, 600)
    grid.show()
    long = (
        "the custom backward raised because the saved tensor was modified in place by an "
        "operation that ran after forward; call clone() before writing into it"
    )
    broken = replace(
        ste_result("torch", n=1_000_000),
        mode_errors={"custom": ErrorInfo("RuntimeError", long, "/work/ops/my_op.py:42")},
    )
    t_x, t_out = broken.tensors
    broken = replace(
        broken,
        tensors=tuple(
            replace(t, grads={m: g for m, g in t.grads.items() if m != "custom"})
            for t in (t_x, t_out)
        ),
    )
    grid.set_data("round_ste", {"torch": broken}, MODES)
    QApplication.processEvents()
    cell = _cells(grid, "x")[("torch", "custom")]
    assert not cell.has_data and cell.plot.toolTip() == cell.message
    text = cell.slot.message_item
    shown = text.textItem.toPlainText()
    assert " ".join(shown.split()) == " ".join(cell.message.split())  # every word is there
    assert text.textItem.boundingRect().width() <= cell.plot.vb.width() + 1  # inside the plot
    numeric = _cells(grid, "x")[("torch", "numeric")]
    line = numeric.slot.note_line
    assert line.text() == "1,000,000 elements, min/max of 800 buckets"
    assert line.toolTip() == line.text()  # whole in the tooltip, elided or not
    # on its line under the plot's x axis, inside the plot, over none of its data
    box = line.sceneBoundingRect()
    assert numeric.plot.sceneBoundingRect().contains(box)
    assert box.top() >= numeric.slot.vb.sceneBoundingRect().bottom()
    for item in line.items.values():
        if item.isVisible():
            assert item.sceneBoundingRect().right() <= numeric.plot.sceneBoundingRect().right()


def _tick_label_rects(axis):
    """The tick labels the axis draws now: (rect, text), left to right."""
    from PySide6.QtGui import QImage, QPainter

    img = QImage(10, 10, QImage.Format_ARGB32)
    painter = QPainter(img)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return sorted(((rect, text) for rect, _flags, text in specs[2]), key=lambda rt: rt[0].left())


def test_tick_labels_never_run_together_in_a_narrow_zoomed_plot(qtbot, ste):
    """At 1000x700 six plots share a row; zoomed to 50..150 the x labels read "100120140" in
    the narrower TF plots (pyqtgraph draws every major label): the step widens until they fit."""
    ste.resize(1000, 700)
    for _ in range(5):
        QApplication.processEvents()
    row = ste.grid.rows["out"]
    cells = [c for c in row.cells if c.has_data]
    cells[0].plot.vb.setXRange(50, 150, padding=0)  # the row's plots are linked
    for _ in range(5):
        QApplication.processEvents()
    for x0, x1 in ((50, 150), (0, 199), (1000, 1200)):
        cells[0].plot.vb.setXRange(x0, x1, padding=0)
        QApplication.processEvents()
        for cell in cells:
            axis = cell.plot.getAxis("bottom")
            labels = _tick_label_rects(axis)
            # labels at the very ends are left out by pyqtgraph when they would stick out
            assert labels, (cell.framework, cell.mode)
            for (a, ta), (b, tb) in zip(labels, labels[1:]):
                assert a.right() + 2 <= b.left(), (cell.framework, cell.mode, ta, tb, axis.width())


def test_a_small_heatmap_has_readable_ticks_on_both_axes(qtbot, ste):
    ste.settings_panel.shape.setText("20x30")
    run_keys(qtbot, ste, keys_of(ste, "round_ste"))
    ste.show_pair("round_ste")
    ste.grid.set_view("x", "heatmap")
    for _ in range(5):
        QApplication.processEvents()
    cell = _cells(ste.grid, "x")[("torch", "custom")]
    bottom = _tick_label_rects(cell.plot.getAxis("bottom"))
    left = sorted(_tick_label_rects(cell.plot.getAxis("left")), key=lambda rt: rt[0].top())
    assert len(bottom) >= 2 and len(left) >= 2, ([t for _, t in bottom], [t for _, t in left])
    assert all(float(t).is_integer() for _, t in bottom + left)
    for (a, _ta), (b, _tb) in zip(bottom, bottom[1:]):
        assert a.right() + 2 <= b.left()
    for (a, _ta), (b, _tb) in zip(left, left[1:]):
        assert a.bottom() <= b.top()
