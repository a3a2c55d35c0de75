"""Measurements that must run in a fresh process of their own (started by scripts/bench.py).

`python scripts/bench_child.py MODE [ARGS]`; the result is one line `BENCH <json>` on stdout.
Modes: window-empty, window-app, gui-warm SIZE[:MODES],... REPS, redraw, export, bare FRAMEWORK SIZES REPS.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
EXAMPLES = [
    os.path.join(ROOT, "resources", "examples", f) for f in ("tutorial_torch.py", "tutorial_tf.py")
]


def report(obj) -> None:
    print("BENCH " + json.dumps(obj), flush=True)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def vm_hwm_mib(pid: int) -> float:
    """Peak resident memory of another (still running) process."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def worker_pid(worker) -> int:
    pid = getattr(worker, "pid", None)
    return pid() if callable(pid) else worker.status.pid


# --- time to window shown ---------------------------------------------------------------------
def on_first_paint(win, then) -> None:
    """Call then(epoch seconds) at the window's first paint event (a zero timer as a fallback for
    platforms that never paint)."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    done = []

    def fire(via="paint"):
        if not done:
            done.append(time.time())
            then(done[0], via)

    class Filter(QObject):
        # any widget of the window painting counts: a covered QMainWindow itself may never paint
        def eventFilter(self, obj, ev):
            if (
                ev.type() == QEvent.Paint
                and not done
                and hasattr(obj, "window")
                and obj.window() is win
            ):
                fire()
            return False

    from PySide6.QtWidgets import QApplication

    f = Filter(win)
    QApplication.instance().installEventFilter(f)
    QTimer.singleShot(2000, lambda: fire("timer"))


def window_empty() -> None:
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication(sys.argv[:1])
    win = QMainWindow()
    win.setCentralWidget(pg.PlotWidget())
    win.resize(1500, 950)
    win.show()

    def done(t, via):
        report({"shown": t, "via": via})
        app.exit(0)

    on_first_paint(win, done)
    app.exec()


def window_app() -> None:
    """The real `gradviz` entry point (built-in examples); MainWindow.show is hooked to time it."""
    from gradviz.qt import main_window

    original = main_window.MainWindow.show

    def show(self):
        original(self)

        def done(t, via):
            from PySide6.QtWidgets import QApplication

            report({"shown": t, "via": via})
            self.close()  # stops the workers the app may have spawned meanwhile
            QApplication.instance().exit(0)

        on_first_paint(self, done)

    main_window.MainWindow.show = show
    from gradviz.cli import main

    main([])


# --- warm re-run in the app -------------------------------------------------------------------
def wait_signal(signal, timeout_s: float):
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    got = []

    def fire(*args):
        got.append(args)
        loop.quit()

    signal.connect(fire)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    loop.exec()
    signal.disconnect(fire)
    if not got:
        raise TimeoutError(f"no signal within {timeout_s} s")
    return got[0]


def gui_warm(sizes: list[str], reps: int) -> None:
    """Warm re-runs in the real window (its tree's run request for one op pair, torch+tf). Two
    moments per run, each timed from the Run call to a synchronous repaint of the grid right after
    the window's own show_pair put that state into the grid (so the app's 30 ms result debounce and
    everything it does on the GUI thread count):
      first: every framework's column shows custom/default of this run (with numeric mode, the
             partial results; the numeric column still says "computing…");
      full:  every framework's final result of this run is in the grid (numeric filled).
    Without numeric mode there are no partial results and the two moments are the same. Plus the
    peak memory of the GUI process and of each worker."""
    from PySide6.QtWidgets import QApplication

    from gradviz.qt.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    win = MainWindow(EXAMPLES)
    win.show()
    win.start()
    wait_signal(win.catalogsLoaded, 120)
    while win.state.loading:
        wait_signal(win.catalogsLoaded, 120)
    pair = "mul_weights"
    keys = [k for k in win.state.loaded.ops if win.state.loaded.pair_name(k) == pair]
    frameworks = {k[0] for k in keys}
    win.tree.select_pair(pair)

    marks: dict = {}  # "first"/"full" -> perf_counter of the repaint after it
    run_state = {"before": set(), "alive": []}
    _mark_repaints(win, pair, frameworks, marks, run_state)

    every_op = list(win.state.loaded.ops)
    out = {"pair": pair, "keys": len(keys), "sizes": {}}
    for spec in sizes:
        out["sizes"][spec] = _warm_size(app, win, spec, reps, keys, every_op, marks, run_state)
    out["gui_peak_mib"] = peak_rss_mib()
    out["workers_peak_mib"] = {
        fw: vm_hwm_mib(worker_pid(w)) for fw, w in win.bridge.engine.workers.items()
    }
    win.close()
    report(out)


def _mark_repaints(win, pair: str, frameworks: set, marks: dict, run_state: dict) -> None:
    """Time each moment of gui_warm (into `marks`) at the repaint right after the window showed it:
    every redraw of the pair goes through PairView.show (the window's show_pair, the debounce
    timer and refresh_view all end there)."""
    original_show_pair = win.pair_view.show

    def show_pair(name):
        original_show_pair(name)
        shown = win.grid.results
        if name != pair or set(shown) != frameworks:
            return
        fresh = [r for r in shown.values() if id(r) not in run_state["before"]]
        if len(fresh) != len(frameworks):
            return  # some column still shows the previous run
        new_marks = [m for m in ("first", "full") if m not in marks]
        if "full" in new_marks and any(getattr(r, "partial", False) for r in fresh):
            new_marks.remove("full")
        if new_marks:
            win.grid.viewport().repaint()
            t = time.perf_counter()
            for m in new_marks:
                marks[m] = t

    win.pair_view.show = show_pair  # PairView.refresh and the window look it up per call


def _warm_size(app, win, spec: str, reps: int, keys, every_op, marks, run_state) -> dict:
    """gui_warm's figures for one size spec: "200", "200:default+custom", or
    "200:default+custom+numeric:all" (every op of the tree, timed to its last result painted)."""
    n, _, rest = spec.partition(":")
    modes_wanted, _, which = rest.partition(":")
    run_keys = every_op if which == "all" else keys
    if modes_wanted:
        for m, box in win.settings_panel.modes.items():
            box.setChecked(m in modes_wanted.split("+"))
    win.settings_panel.shape.setText(n)
    first, full, done = [], [], []
    modes = None
    partials = 0
    for i in range(reps + 1):  # the first run warms this size up; not counted
        t0, t_done, results, got_partial = _warm_run(app, win, spec, run_keys, marks, run_state)
        modes = list(results[0].request.settings.modes)
        if i:
            first.append(marks["first"] - t0)
            full.append(marks["full"] - t0)
            done.append(t_done - t0)
            partials += sum(1 for a in got_partial if a.result.partial)
    return {
        "first_median_s": statistics.median(first),
        "first_runs": first,
        "full_median_s": statistics.median(full),
        "full_runs": full,
        "done_median_s": statistics.median(done),
        "done_runs": done,
        "partial_results": partials / reps,
        "modes": modes,
        "ops": len(run_keys),
        "plots": win.grid.plot_count(),
    }


def _warm_run(app, win, spec: str, run_keys, marks: dict, run_state: dict):
    """One run of gui_warm: (its start, its last repaint, its results, the partial results)."""
    marks.clear()
    # the previous results stay referenced, so no new result can reuse their id()
    run_state["alive"] = [a.result for a in win.state.results.analyses().values()] + list(
        win.grid.results.values()
    )
    run_state["before"] = {id(r) for r in run_state["alive"]}
    got_partial = []
    win.bridge.resultReady.connect(got_partial.append)
    t0 = time.perf_counter()
    assert win.run(run_keys)
    (results,) = wait_signal(win.runDone, 600)
    app.processEvents()
    end = time.monotonic() + 10
    while "full" not in marks and time.monotonic() < end:  # the grid's debounce
        app.processEvents()
        time.sleep(0.001)
    win.grid.viewport().repaint()
    t_done = time.perf_counter()
    win.bridge.resultReady.disconnect(got_partial.append)
    bad = [r.error.one_line() for r in results if r.status != "ok"]
    if bad:
        raise RuntimeError("; ".join(bad))
    if "first" not in marks or "full" not in marks:
        raise RuntimeError(f"{spec}: the grid never showed this run ({sorted(marks)})")
    return t0, t_done, results, got_partial


# --- grid redraw and export (synthetic results: no framework needed) --------------------------
def synthetic_results(n: int, tensors: int, modes=("default", "custom"), seed: int = 0):
    import numpy as np

    from gradviz.model import OpInfo, RunRequest, RunResult, RunSettings, TensorResult

    rng = np.random.default_rng(seed)
    settings = RunSettings(shape=(n,), modes=tuple(modes))
    out = {}
    for fw in ("torch", "tf"):
        ts = []
        for i in range(tensors):
            role = "output" if i == tensors - 1 else "input"
            value = rng.standard_normal(n).astype(np.float32)
            g = rng.standard_normal(n).astype(np.float32)
            grads = {"default": g, "custom": g.copy()}
            ts.append(
                TensorResult(f"t{i}", role, (n,), "float32", value, {m: grads[m] for m in modes})
            )
        op = OpInfo("bench_op", fw, "function", "BenchOp", "/bench/op.py", 1, ("x",))
        out[fw] = RunResult(
            RunRequest("/bench/op.py", "BenchOp", fw, settings), op, "cpu", tensors=tuple(ts)
        )
    return out


def redraw(reps: int) -> None:
    """4 columns (2 frameworks x default, custom) x 4 tensors x 1M elements, as the window gets a
    re-run's results: gradviz.app.analysis.analyze() (verdicts and decimated curves) runs in the
    engine bridge's own thread, so it is timed apart; the GUI thread's part is grid.set_data with
    those series and the paint. The torch-vs-tf parity of big arrays runs in the window's
    ParityWorker thread and the numbers table is filled on the GUI thread: both timed apart (no
    target: they are not the grid). Each repetition gets new result objects (alternating two data
    sets), as a re-run does; the first draw, which creates the plots, is reported apart."""
    from dataclasses import replace

    from PySide6.QtWidgets import QApplication

    from gradviz.app.analysis import analyze
    from gradviz.compare import parity
    from gradviz.qt.grid import GridView
    from gradviz.qt.numbers_table import NumbersTable

    app = QApplication(sys.argv[:1])
    numbers = NumbersTable()
    grid = GridView()
    grid.resize(1120, 900)
    grid.show()
    app.processEvents()
    sets = [synthetic_results(1_000_000, 4, seed=s) for s in (0, 1)]
    modes = ("default", "custom")
    times, prep_times, parity_times, table_times, first = [], [], [], [], None
    for i in range(reps + 1):
        # fresh result objects each time: the grid skips results it already shows
        results = {fw: replace(r) for fw, r in sets[i % 2].items()}
        t0 = time.perf_counter()
        prepared = {fw: analyze(r) for fw, r in results.items()}
        t1 = time.perf_counter()
        comps = {fw: p.comparison for fw, p in prepared.items()}
        series = {fw: p.series for fw, p in prepared.items()}
        assert grid.set_data("bench_op", results, modes, comps, series=series)
        app.processEvents()
        grid.viewport().repaint()
        t2 = time.perf_counter()
        # then, apart: torch-vs-tf parity (the window's background ParityWorker: it needs both
        # frameworks' results) and filling the numbers table (GUI thread)
        rows = parity(results.values())
        t3 = time.perf_counter()
        numbers.set_data(comps, rows, modes)
        t4 = time.perf_counter()
        if i:
            times.append(t2 - t1)
            prep_times.append(t1 - t0)
            parity_times.append(t3 - t2)
            table_times.append(t4 - t3)
        else:
            first = t2 - t1
    report(
        {
            "median_s": statistics.median(times),
            "runs": times,
            "first_s": first,
            "prepare_median_s": statistics.median(prep_times),
            "prepare_runs": prep_times,
            "parity_median_s": statistics.median(parity_times),
            "parity_runs": parity_times,
            "table_median_s": statistics.median(table_times),
            "table_runs": table_times,
            "plots": grid.plot_count(),
            "columns": len(grid.rows["t0"].cells) if "t0" in grid.rows else 0,
            "rows": len(grid.rows),
        }
    )


def export(reps: int, outdir: str) -> None:
    """save_grid of one op at 1M elements (both frameworks, default and custom, x/weights/out)."""
    from gradviz.compare import compare_result
    from gradviz.qt.export import save_grid

    results = list(synthetic_results(1_000_000, 3).values())
    comps = [compare_result(r) for r in results]
    out = {}
    for ext in ("png", "svg", "pdf"):
        path = os.path.join(outdir, f"bench_export.{ext}")
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            save_grid(results, path, comparisons=comps)
            times.append(time.perf_counter() - t0)
        out[ext] = {
            "median_s": statistics.median(times),
            "runs": times,
            "bytes": os.path.getsize(path),
        }
    report(out)


# --- the bare framework, no gradviz -----------------------------------------------------------
def bare(framework: str, sizes: list[int], reps: int) -> None:
    """What the engine does for mul_weights with modes default+custom, written directly: seeded
    numpy inputs -> tensors -> custom forward+backward and autodiff forward+backward -> numpy."""
    import numpy as np

    out = {}
    if framework == "torch":
        import torch

        class MulWeights(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return x * w

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                return g * w, g * x

        def once(n):
            rng = np.random.default_rng(0)
            xs, ws = (
                rng.standard_normal(n).astype(np.float32),
                rng.standard_normal(n).astype(np.float32),
            )
            res = []
            for custom in (False, True):
                x = torch.tensor(xs, requires_grad=True)
                w = torch.tensor(ws, requires_grad=True)
                y = MulWeights.apply(x, w) if custom else x * w
                (y * torch.ones_like(y)).sum().backward()
                res.append(
                    (y.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy())
                )
            return res
    else:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow as tf

        @tf.custom_gradient
        def mul_weights(x, w):
            def grad(g):
                return g * w, g * x

            return x * w, grad

        def once(n):
            rng = np.random.default_rng(0)
            xs, ws = (
                rng.standard_normal(n).astype(np.float32),
                rng.standard_normal(n).astype(np.float32),
            )
            res = []
            for custom in (False, True):
                x, w = tf.constant(xs), tf.constant(ws)
                with tf.GradientTape() as tape:
                    tape.watch([x, w])
                    y = mul_weights(x, w) if custom else x * w
                    loss = tf.reduce_sum(y * tf.ones_like(y))
                gx, gw = tape.gradient(loss, [x, w])
                res.append((y.numpy(), gx.numpy(), gw.numpy()))
            return res

    for n in sizes:
        once(n)  # warm-up, as the engine's workers are warm
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            once(n)
            times.append(time.perf_counter() - t0)
        out[str(n)] = statistics.median(times)
    report(out)


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "window-empty":
        window_empty()
    elif mode == "window-app":
        window_app()
    elif mode == "gui-warm":
        gui_warm(argv[1].split(","), int(argv[2]))
    elif mode == "redraw":
        redraw(int(argv[1]))
    elif mode == "export":
        export(int(argv[1]), argv[2])
    elif mode == "bare":
        bare(argv[1], [int(s) for s in argv[2].split(",")], int(argv[3]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
