"""The window stays responsive: torch-vs-tf parity of big arrays is computed off the GUI thread and
its rows reach the numbers table later; a re-run's "numeric: computing…" keeps the numeric plot
(no reset), and a row drawn again with the same ranges is not re-linked or re-ranged."""

import threading
from dataclasses import replace

import numpy as np
import pytest
from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402
from samples import ste_result

from gradviz.app.analysis import analyze
from gradviz.app.settings_file import SettingsFile
from gradviz.model import MODES, FileCatalog, OpInfo, RunRequest, RunSettings


def _partial(full):
    return replace(
        full,
        partial=True,
        tensors=tuple(
            replace(t, grads={m: g for m, g in t.grads.items() if m != "numeric"})
            for t in full.tensors
        ),
    )


# --- grid: the numeric cell while it computes ---------------------------------------------------
@pytest.fixture
def grid(qtbot):
    from gradviz.qt.grid import GridView

    g = GridView()
    g.resize(1000, 700)
    qtbot.addWidget(g)
    g.show()
    return g


def _cell(grid, tensor, fw, mode):
    return next(c for c in grid.rows[tensor].cells if (c.framework, c.mode) == (fw, mode))


def test_rerun_keeps_the_numeric_plot_under_a_computing_note(grid, monkeypatch):
    from gradviz.qt.grid.cell import CellPlot

    grid.set_data("round_ste", {"torch": ste_result("torch", seed=0)}, MODES)
    numeric = _cell(grid, "x", "torch", "numeric")
    slot, curve = numeric.slot, numeric.slot.curve
    assert curve is not None and curve.isVisible()
    resets = []
    monkeypatch.setattr(CellPlot, "reset", lambda self: resets.append(self))

    second = ste_result("torch", seed=1)
    grid.set_data("round_ste", {"torch": _partial(second)}, MODES)
    waiting = _cell(grid, "x", "torch", "numeric")
    assert not waiting.has_data and waiting.message == "numeric: computing…"
    assert waiting.slot is slot and slot.curve is curve
    assert not curve.isVisible() and slot.wait_note.isVisible()
    assert slot.item.getAxis("left").isVisible()  # no switch to a message cell
    assert _cell(grid, "x", "torch", "custom").has_data

    grid.set_data("round_ste", {"torch": second}, MODES)
    filled = _cell(grid, "x", "torch", "numeric")
    assert filled.has_data and filled.slot is slot and slot.curve is curve
    assert curve.isVisible() and not slot.wait_note.isVisible()
    np.testing.assert_array_equal(filled.data["y"], np.zeros(200))
    assert resets == []  # setData only, all the way


def test_computing_note_goes_when_the_plot_is_reused_for_something_else(grid):
    grid.set_data("round_ste", {"torch": ste_result("torch")}, MODES)
    grid.set_data("round_ste", {"torch": _partial(ste_result("torch", seed=1))}, MODES)
    slot = _cell(grid, "x", "torch", "numeric").slot
    assert slot.wait_note is not None
    grid.set_view("x", "histogram")  # the plot is reset and drawn anew
    assert slot.wait_note is None
    assert _cell(grid, "x", "torch", "numeric").message == "numeric: computing…"


def test_same_row_again_keeps_links_and_restores_a_zoomed_range(grid, monkeypatch):
    from gradviz.qt.grid import links

    res = {"torch": ste_result("torch", seed=0), "tf": ste_result("tf", seed=0)}
    grid.set_data("round_ste", res, MODES)
    row = grid.rows["x"]
    first = row.cells[0].plot
    drawn = first.vb.viewRange()
    synced = []
    monkeypatch.setattr(links, "sync_y", lambda plots: synced.append(plots))
    # the same data as new result objects, as a re-run gives: nothing to re-link
    grid.set_data("round_ste", {fw: replace(r) for fw, r in res.items()}, MODES)
    assert synced == []
    assert first.vb.viewRange() == drawn
    # a user zoom since the last draw is undone by the next draw, links or not
    first.setXRange(10, 20, padding=0)
    assert row.cells[1].plot.vb.viewRange()[0] == pytest.approx([10, 20])
    grid.set_data("round_ste", {fw: replace(r) for fw, r in res.items()}, MODES)
    assert first.vb.viewRange()[0] == pytest.approx(drawn[0])
    assert row.cells[1].plot.vb.viewRange()[0] == pytest.approx(drawn[0])


# --- parity off the GUI thread ------------------------------------------------------------------
class IdleEngine:
    frameworks = ("torch", "tf")

    def states(self):
        return {}

    def cancel(self):
        pass


@pytest.fixture
def pair_window(qtbot, tmp_path, write_module):
    from gradviz.qt.main_window import MainWindow

    path = write_module("ste.py", "x = 1\n")
    win = MainWindow([path], engine=IdleEngine(), qsettings=SettingsFile(str(tmp_path / "g.ini")))
    qtbot.addWidget(win)
    ops = {
        fw: OpInfo("round_ste", fw, "function", "RoundSTE", path, 1, ("x",))
        for fw in ("torch", "tf")
    }
    # what the engine would answer, given to the window's model as the bridge gives it
    win.state.catalogs_arrived([FileCatalog(path, fw, (op,)) for fw, op in ops.items()], (path,))
    win.tree.select_pair("round_ste")

    def deliver(res, partial=False):
        req = RunRequest(
            path, "RoundSTE", res.framework, RunSettings(shape=(res.tensors[0].value.size,))
        )
        res = replace(res, request=req, op=replace(res.op, file=path))
        assert res.partial == partial
        win.state.arrived(analyze(res))
        return res

    return win, deliver


def test_big_pair_parity_runs_off_the_gui_thread_and_fills_the_table_later(
    qtbot, pair_window, monkeypatch
):
    import gradviz.compare

    win, deliver = pair_window
    real, threads = gradviz.compare.parity, []

    def spy(results):
        threads.append(threading.current_thread())
        return real(results)

    monkeypatch.setattr(gradviz.compare, "parity", spy)
    n = 1_000_000
    deliver(ste_result("torch", n=n, numeric=False))
    deliver(ste_result("tf", n=n, numeric=False))
    win.show_pair("round_ste")
    assert set(win.grid.results) == {"torch", "tf"}
    if not threads:  # still computing: the table says so
        assert "computing" in win.numbers.parity_label.text()
    qtbot.waitUntil(lambda: win.numbers.parity.rowCount() > 0, timeout=RUN_TIMEOUT_MS)
    assert threads and all(t is not threading.main_thread() for t in threads)
    # value, default and custom of x and out, all equal across the frameworks
    assert win.numbers.parity.rowCount() == 6
    verdicts = {win.numbers.parity.item(r, 3).text() for r in range(6)}
    assert verdicts == {"match"}
    # shown again: from the cache, no second computation
    calls = len(threads)
    win.grid.results = {}  # force the grid to draw again
    win.show_pair("round_ste")
    assert len(threads) == calls and win.numbers.parity.rowCount() == 6


def test_partial_pair_gets_no_parity_until_the_numeric_pass(qtbot, pair_window, monkeypatch):
    import gradviz.compare

    win, deliver = pair_window
    calls = []
    monkeypatch.setattr(gradviz.compare, "parity", lambda rs: calls.append(rs) or [])
    deliver(_partial(ste_result("torch")), partial=True)
    deliver(_partial(ste_result("tf")), partial=True)
    assert set(win.grid.results) == {"torch", "tf"}
    assert calls == [] and win.numbers.parity.rowCount() == 0
    assert "waiting for the numeric pass" in win.numbers.parity_label.text()


def test_small_pair_parity_is_immediate(qtbot, pair_window):
    win, deliver = pair_window
    deliver(ste_result("torch"))
    deliver(ste_result("tf"))
    win.show_pair("round_ste")
    # 200 elements: computed in place, no wait (8 rows: value, default, custom, numeric x 2 tensors)
    assert win.numbers.parity.rowCount() == 8


def test_parity_worker_answers_only_the_newest_request(qtbot):
    from gradviz.qt.parity_worker import ParityWorker

    gate, seen = threading.Event(), []

    def compute(pair, results):
        seen.append(pair)
        gate.wait(10)
        return [pair]

    worker = ParityWorker(compute)
    answers = []
    worker.ready.connect(lambda *args: answers.append(args))
    big = (ste_result("torch", n=30_000),)
    assert worker.rows("a", big) is None
    qtbot.waitUntil(lambda: seen == ["a"], timeout=RUN_TIMEOUT_MS)
    # while "a" computes, "b" then "c" are asked for: "b" is superseded before it starts
    assert worker.rows("b", big) is None
    assert worker.rows("c", big) is None
    gate.set()
    qtbot.waitUntil(lambda: len(answers) == 2, timeout=RUN_TIMEOUT_MS)
    assert [a[0] for a in answers] == ["a", "c"] and seen == ["a", "c"]
    worker.accept(*answers[1])
    assert worker.rows("c", big) == ["c"]  # cached: no third computation
    assert seen == ["a", "c"]
    assert worker.close()  # its thread is joined
    assert worker.rows("d", big) is None and seen == ["a", "c"]  # closed: nothing more starts


def test_parity_cache_does_not_keep_old_results_alive(qtbot):
    import gc
    import weakref

    from gradviz.qt.parity_worker import ParityWorker

    worker = ParityWorker(lambda pair, results: [pair])
    res = (ste_result("torch"), ste_result("tf"))
    assert worker.rows("p", res) == ["p"]
    assert worker.cached("p", res) == ["p"]
    gone = weakref.ref(res[0])
    del res
    gc.collect()
    assert gone() is None


# --- the bridge prepares a pair's partial results side by side ----------------------------------
class PairEngine:
    """Gives both frameworks' partial results first, then the full ones."""

    frameworks = ("torch", "tf")

    def states(self):
        return {}

    def cancel(self):
        pass

    def run_passes(self, requests, passes, on_event):
        from gradviz.engine.passes import OpStarted, ResultArrived

        fulls = []
        for req in requests:
            on_event(OpStarted(req))
            fulls.append(replace(ste_result(req.framework), request=req))
        for full in fulls:
            on_event(ResultArrived(_partial(full)))
        for full in fulls:
            on_event(ResultArrived(full))
        return fulls


def test_bridge_analyzes_partials_together_and_each_before_its_full_result(qtbot, monkeypatch):
    import gradviz.app.analysis as analysis_mod
    from gradviz.qt.engine_bridge import EngineBridge

    real = analysis_mod.analyze
    both_in = threading.Barrier(2, timeout=5)

    def analyze(res, **kw):
        if res.partial:
            both_in.wait()  # returns only when the other partial is being analysed too
        return real(res, **kw)

    monkeypatch.setattr(analysis_mod, "analyze", analyze)
    bridge = EngineBridge(PairEngine())
    bridge.start()
    order = []
    bridge.resultReady.connect(
        lambda a: order.append(
            ("partial" if a.result.partial else "full", a.result.framework, a.problem)
        )
    )
    reqs = [RunRequest("/op.py", "RoundSTE", fw, RunSettings()) for fw in ("torch", "tf")]
    with qtbot.waitSignal(bridge.runFinished, timeout=RUN_TIMEOUT_MS):
        assert bridge.run(reqs)
    assert bridge.close() == []  # every thread it started has ended
    assert not [
        t for t in threading.enumerate() if t.name.startswith(("gradviz-run", "gradviz-analyze"))
    ]
    assert len(order) == 4 and all(problem == "" for _s, _fw, problem in order)
    for fw in ("torch", "tf"):
        assert order.index(("partial", fw, "")) < order.index(("full", fw, ""))


def test_parity_rows_in_sight_and_notes_whole_in_their_tooltips(qtbot, pair_window):
    """The walkthrough found the parity table two rows high under a half-empty numbers table:
    at 1500x950 it now shows at least three of round_ste's eight rows, and a note cut at its
    cell's edge is whole in the cell's tooltip."""
    win, deliver = pair_window
    win.resize(1500, 950)
    win.show()
    deliver(ste_result("torch"))
    deliver(ste_result("tf"))
    win.show_pair("round_ste")
    win.tabs.setCurrentWidget(win.numbers)
    p = win.numbers.parity
    assert p.rowCount() == 8
    qtbot.waitUntil(lambda: p.viewport().height() > 0)
    in_sight = [
        r
        for r in range(p.rowCount())
        if 0 <= p.rowViewportPosition(r)
        and p.rowViewportPosition(r) + p.rowHeight(r) <= p.viewport().height()
    ]
    assert len(in_sight) >= 3, (len(in_sight), p.viewport().height())
    cells = [p.item(r, c) for r in range(p.rowCount()) for c in range(p.columnCount())]
    assert all(item.toolTip() == item.text() for item in cells)
