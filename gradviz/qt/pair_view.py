"""What the middle of the window shows for the selected pair: header, flow chart, grid and
numbers drawn from the model's analyses (or a message saying why there is nothing), redraws of
results arriving close together debounced, and a clicked tensor or diagnostic followed."""

from __future__ import annotations

from PySide6.QtCore import QTimer

from gradviz.model import MODES
from gradviz.plots.flow import build_flow_figure, is_stack


class PairView:
    """Draws the shown pair into the middle of the window: `tree` (which pair is shown),
    `pair_label`, `flow_view`, `grid`, `numbers` (its table), `pair_numbers` (what fills it) and
    `diagnostics` (narrowed to the shown op, and followed when one is clicked)."""

    def __init__(
        self,
        state,
        tree,
        grid,
        numbers,
        pair_numbers,
        pair_label,
        flow_view,
        diagnostics,
        run_picker,
        parent=None,
    ) -> None:
        self.state, self.tree, self.grid, self.numbers = state, tree, grid, numbers
        self.pair_numbers, self.pair_label, self.flow_view = pair_numbers, pair_label, flow_view
        self.diagnostics, self.run_picker = diagnostics, run_picker
        self._grid_timer = QTimer(parent)
        self._grid_timer.setSingleShot(True)
        self._grid_timer.setInterval(30)
        self._grid_timer.timeout.connect(self.refresh)

    def connect(self) -> None:
        # show looked up per call: scripts/bench_child.py wraps it to time each redraw
        self.tree.pairSelected.connect(lambda pair: self.show(pair))
        self.grid.tensorClicked.connect(self.tensor_clicked)
        self.numbers.tensorSelected.connect(self.grid.highlight)
        self.diagnostics.problemSelected.connect(self.problem_selected)
        self.run_picker.picked.connect(self.against_picked)

    def show(self, pair: str | None) -> None:
        state, grid = self.state, self.grid
        self._grid_timer.stop()
        self.diagnostics.set_selected_op(state.loaded.keys_of(pair) if pair else ())
        if not pair:
            if state.loading:
                grid.show_message("loading op files… (frameworks start in their own processes)")
            elif not state.loaded.files:
                grid.show_message("No op files. Open one with File ▸ Open or drop .py files here.")
            else:
                grid.show_message("No ops found in the loaded files (see Diagnostics).")
            self.pair_numbers.clear()
            self.pair_label.show_pair(None)
            self.flow_view.set_figure(None)
            self.run_picker.offer([])
            return
        analyses = state.pair_analyses(pair)
        results = {fw: a.result for fw, a in analyses.items()}
        comps = {fw: a.comparison for fw, a in analyses.items()}
        series = {fw: a.series for fw, a in analyses.items()}
        modes = next((r.request.settings.modes for r in results.values()), MODES)
        self.pair_label.show_pair(pair)
        self.flow_view.set_figure(
            build_flow_figure(list(results.values()), pair, [a.flow for a in analyses.values()])
            if is_stack(list(results.values()))
            else None
        )
        drawn = grid.set_data(
            pair, results, modes, comps, series=series, against=self._against(pair, analyses)
        )
        states = {state.progress.states.get(k) for k in state.loaded.keys_of(pair)}
        if not results and states & {"queued", "running"}:  # not "not run yet": it is on its way
            grid.show_message(
                f"{pair}: "
                + ("running… (elapsed and timeout above)" if "running" in states else "queued…")
            )
        if drawn:  # else the same results as shown: nothing to redo
            self.pair_numbers.show(
                pair, tuple(results.values()), comps, modes, tuple(analyses.values())
            )

    def _against(self, pair: str, analyses: dict):
        """Offer the pair's earlier runs in the picker; (label, {fw: RunResult}) of the one
        picked, or None. Earlier: kept in the history and not the result shown now."""
        keys = {k[0]: k for k in self.state.loaded.keys_of(pair)}
        earlier: dict[int, dict] = {}
        labels: dict[int, str] = {}
        for fw, key in keys.items():
            shown = analyses.get(fw)
            for run in self.state.history.runs(key):
                # the shown run by its request (its checks arriving replace the result object)
                if shown is None or run.analysis.result.request is not shown.result.request:
                    earlier.setdefault(run.number, {})[fw] = run.analysis.result
                    labels.setdefault(run.number, run.label())
        numbers = sorted(earlier, reverse=True)
        self.run_picker.offer([(n, labels[n]) for n in numbers])
        n = self.run_picker.number()
        return (f"run {n}", earlier[n]) if n is not None else None

    def against_picked(self, number) -> None:
        """An earlier run picked: the grid draws the difference view against it."""
        self.refresh()
        if number is not None:
            self.set_all_views("difference")

    def refresh(self) -> None:
        self.show(self.tree.current_pair())

    def schedule(self, key) -> None:
        """One redraw for results arriving close together; the batch end redraws anyway. When
        every framework of the shown pair has a result of this batch at the same stage (both
        partial, or both final), draw at once; else give the other the 30 ms debounce."""
        shown = self.tree.current_pair()
        pair = self.state.loaded.pair_name(key)
        if shown is not None and pair != shown:
            return
        if shown is not None and self.state.pair_in_step(pair):
            self.refresh()
        else:
            self._grid_timer.start()

    def set_all_views(self, view: str) -> None:
        grid = self.grid
        for name, row in grid.rows.items():
            if row.view_box.findData(view) >= 0:
                grid.set_view(name, view)

    def problem_selected(self, p) -> None:
        """A diagnostic clicked: show its op, and its tensor when it names one."""
        if p.key and p.key in self.state.loaded.ops:
            self.tree.select_pair(self.state.loaded.pair_name(p.key))
        if p.tensor and p.tensor in self.grid.rows:
            self.tensor_clicked(p.tensor)

    def tensor_clicked(self, name: str) -> None:
        self.grid.highlight(name)
        self.numbers.select(name)
