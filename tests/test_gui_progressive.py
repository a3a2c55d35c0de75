"""Results reach the window analysed off the GUI thread, each once; with the engine's on_partial,
custom and default show at once and the numeric column fills in when it arrives. Trap examples
menu."""

import threading
from dataclasses import replace

import numpy as np
import pytest
from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402
from samples import ste_result

from gradviz.app.analysis import Analysis
from gradviz.app.settings_file import SettingsFile
from gradviz.engine.passes import OpStarted, ResultArrived
from gradviz.model import FileCatalog, OpInfo, RunRequest


class FakeEngine:
    """Answers runs with hand-made results; `partial_first` mimics the engine's QUICK -> NUMERIC
    passes (a partial result of each op first)."""

    def __init__(self, partial_first: bool):
        self.frameworks = ("torch",)
        self.release = threading.Event()
        if partial_first:
            self.run_passes = self._run_partial

    def states(self):
        return {}

    def cancel(self):
        self.release.set()

    def _full(self, req: RunRequest):
        r = ste_result("torch", spike_at=7)
        return replace(r, request=req, op=replace(r.op, file=req.file))

    def run_passes(self, requests, passes, on_event):
        out = []
        for req in requests:
            on_event(OpStarted(req))
            out.append(self._full(req))
            on_event(ResultArrived(out[-1]))
        return out

    def _run_partial(self, requests, passes, on_event):
        # as the real engine (engine.numeric_pass): the final result holds the partial's arrays
        fulls = []
        for req in requests:
            fulls.append(self._full(req))
            quick = replace(req, settings=req.settings.with_(modes=("default", "custom")))
            on_event(
                ResultArrived(
                    replace(
                        fulls[-1],
                        request=quick,
                        partial=True,
                        tensors=tuple(
                            replace(t, grads={m: g for m, g in t.grads.items() if m != "numeric"})
                            for t in fulls[-1].tensors
                        ),
                    )
                )
            )
        self.release.wait(10)
        for req, full in zip(requests, fulls):
            on_event(OpStarted(req))
            on_event(ResultArrived(full))
        return fulls


@pytest.fixture
def window(qtbot, tmp_path, write_module):
    from gradviz.qt.main_window import MainWindow

    made = []

    def make(engine):
        path = write_module("ste.py", "x = 1\n")
        win = MainWindow([path], engine=engine, qsettings=SettingsFile(str(tmp_path / "g.ini")))
        qtbot.addWidget(win)
        op = OpInfo("round_ste", "torch", "function", "RoundSTE", path, 1, ("x",))
        win.state.catalogs_arrived([FileCatalog(path, "torch", (op,))], (path,))
        win.settings_panel.modes["numeric"].setChecked(True)
        made.append(win)
        return win, ("torch", path, "RoundSTE")

    yield make
    for w in made:
        w.bridge.engine.release.set()


def _cell(win, mode):
    return next(c for c in win.grid.rows["x"].cells if c.mode == mode)


def test_partial_results_show_custom_default_first_then_numeric(qtbot, window):
    engine = FakeEngine(partial_first=True)
    win, key = window(engine)
    delivered = []
    win.bridge.resultReady.connect(delivered.append)
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run([key])
        qtbot.waitUntil(
            lambda: "x" in win.grid.rows and _cell(win, "numeric").message == "numeric: computing…",
            timeout=RUN_TIMEOUT_MS,
        )
        assert _cell(win, "custom").data["y"].max() == pytest.approx(50.0)
        assert win.numbers.value("x", "torch", "verdict") == "surrogate"
        engine.release.set()
    # each result delivered once, analysed: the partial one, then the final one
    assert [a.result.partial for a in delivered] == [True, False]
    assert all(isinstance(a, Analysis) and a.comparison is not None for a in delivered)
    # the final result shares the partial one's custom/default arrays: their curves and numbers
    # are the partial analysis's own objects, not worked out again
    first, final = delivered
    for mode in ("custom", "default"):
        assert final.series[("x", mode)] is first.series[("x", mode)]
        assert final.comparison.tensors[0].stats[mode] is first.comparison.tensors[0].stats[mode]
    assert (
        final.comparison.tensors[0].metrics["custom~default"]
        is first.comparison.tensors[0].metrics["custom~default"]
    )
    assert ("x", "numeric") in final.series and ("x", "numeric") not in first.series
    numeric = _cell(win, "numeric")
    assert numeric.has_data
    np.testing.assert_array_equal(numeric.data["y"], np.zeros(200))
    assert not win.state.results.result(key).partial


def test_engine_without_on_partial_still_runs(qtbot, window):
    win, key = window(FakeEngine(partial_first=False))
    delivered = []
    win.bridge.resultReady.connect(delivered.append)
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run([key])
    assert [a.result.partial for a in delivered] == [False]
    assert _cell(win, "numeric").has_data and _cell(win, "custom").has_data
    assert win.numbers.value("x", "torch", "verdict") == "surrogate"


def test_trap_examples_menu_opens_the_traps_and_start_opens_tutorials_only(qtbot, window):
    import os

    from gradviz.catalog import builtin_examples, trap_examples

    tutorials = builtin_examples()
    assert tutorials and all(os.path.basename(f).startswith("tutorial") for f in tutorials)
    traps = trap_examples()
    from gradviz.model import FRAMEWORKS

    # one trap file per framework installed: JAX's only where it is
    assert sorted(os.path.basename(f) for f in traps) == sorted(
        f"traps_{fw}.py" for fw in FRAMEWORKS
    )
    win, _ = window(FakeEngine(partial_first=False))
    asked = []
    win.bridge.load = lambda files: asked.append(tuple(files))
    assert win.act_traps.text() == "Open trap examples"
    win.act_traps.trigger()
    assert asked == [tuple(traps)]
    assert set(traps) <= set(win.state.loaded.files)
