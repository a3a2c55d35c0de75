"""Issue 28 item 5, before and after, on the real window (offscreen, real workers): an op run
with a factor-2 backward, fixed on disk and run again keeps its first run; the op tree marks its
changed verdict (differs → match), the grid draws this run against the earlier one (the
difference view, custom now minus custom then), and the whole-run JSON lists both runs under
"history" with their settings and the sha1 of the file each ran."""

import hashlib

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS, export_whole_run_json, run_keys  # noqa: E402

from gradviz.plots.ticks import fmt  # noqa: E402

pytestmark = pytest.mark.gui

OP_SRC = """
import torch


class Triple(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return {factor} * g
"""


def test_a_fixed_op_is_drawn_against_its_earlier_run(
    qtbot, make_window, write_module, tmp_path, monkeypatch
):
    path = write_module("triple_torch.py", OP_SRC.format(factor=6))  # the bug: 2x too big
    # with a contract check: its arrival replaces the op's result object after the run
    win = make_window(
        [path],
        {
            "run/modes": "default,custom",
            "run/watch": "false",
            "run/checks": "noncontiguous_upstream",
        },
    )
    key = ("torch", path, "Triple")
    run_keys(qtbot, win, [key])
    assert win.state.op_mark(key) == "differs"
    assert not win.tree.shown_mark(key)[0].endswith("Δ")  # nothing to have changed from
    win.tree.select_pair("Triple")
    win.show_pair("Triple")
    qtbot.waitUntil(lambda: win.state.results.result(key).checks != ())
    win.show_pair("Triple")
    assert [win.run_picker.itemData(i) for i in range(win.run_picker.count())] == [None]
    buggy = open(path, "rb").read()
    write_module("triple_torch.py", OP_SRC.format(factor=3))  # the fix
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        win.reload()
    run_keys(qtbot, win, [key])
    assert win.state.op_mark(key) == "match"
    glyph, _colour, tip = win.tree.shown_mark(key)
    assert glyph.endswith("Δ") and "differs → match" in tip

    runs = win.state.history.runs(key)
    assert [r.number for r in runs] == [2, 1] and [r.mark for r in runs] == ["match", "differs"]
    assert runs[1].source_sha1 == hashlib.sha1(buggy).hexdigest()
    assert runs[0].source_sha1 == hashlib.sha1(open(path, "rb").read()).hexdigest()

    win.tree.select_pair("Triple")
    win.show_pair("Triple")
    picker = win.run_picker
    assert [picker.itemData(i) for i in range(picker.count())] == [None, 1]
    picker.pick(1)  # as the user picks it: the difference view
    row = win.grid.rows["x"]
    assert row.view() == "difference"
    cell = next(c for c in row.cells if c.framework == "torch")
    assert cell.mode == "custom−custom (run 1)"
    now = runs[0].analysis.result.tensor("x").grads["custom"]
    then = runs[1].analysis.result.tensor("x").grads["custom"]
    assert np.array_equal(then, 2 * now)  # 6 g against 3 g: the fix halved it
    big = float(np.max(np.abs(np.float64(now) - np.float64(then))))
    assert cell.panel.info.startswith(f"max |custom − custom (run 1)| = {fmt(big)}")
    assert "custom − custom (run 1)" in win.grid.header.text()  # the legend names it

    data = export_whole_run_json(win, tmp_path / "run.json", monkeypatch)
    assert [op["name"] for op in data["ops"]] == ["Triple"]  # the report's keys as they were
    (hist,) = data["history"]
    assert (hist["framework"], hist["file"], hist["qualname"]) == key
    assert [r["run"] for r in hist["runs"]] == [2, 1]
    assert [r["verdicts"]["x"] for r in hist["runs"]] == ["match", "differs"]
    assert hist["runs"][1]["source_sha1"] == hashlib.sha1(buggy).hexdigest()
    assert hist["runs"][0]["settings"]["modes"] == ["default", "custom"]
