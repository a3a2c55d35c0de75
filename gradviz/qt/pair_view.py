"""What the middle of the window shows for the selected pair: header, flow chart, grid and
numbers drawn from the model's analyses (or a message saying why there is nothing), redraws of
results arriving close together debounced, and a clicked tensor or diagnostic followed."""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QTimer

from gradviz.model import MODES
from gradviz.plots.flow import build_flow_figure, is_stack


class PairView:
    def __init__(self, win) -> None:
        self.win = win
        self._grid_timer = QTimer(win)
        self._grid_timer.setSingleShot(True)
        self._grid_timer.setInterval(30)
        self._grid_timer.timeout.connect(self.refresh)

    def connect(self) -> None:
        win = self.win
        win.tree.pairSelected.connect(win.show_pair)
        win.grid.tensorClicked.connect(self.tensor_clicked)
        win.numbers.tensorSelected.connect(win.grid.highlight)
        win.diagnostics.problemSelected.connect(self.problem_selected)

    def show(self, pair: Optional[str]) -> None:
        win, state = self.win, self.win.state
        self._grid_timer.stop()
        win.diagnostics.set_selected_op(state.loaded.keys_of(pair) if pair else ())
        if not pair:
            if state.loading:
                win.grid.show_message("loading op files… (frameworks start in their own processes)")
            elif not state.loaded.files:
                win.grid.show_message("No op files. Open one with File ▸ Open or drop .py files here.")
            else:
                win.grid.show_message("No ops found in the loaded files (see Diagnostics).")
            win.pair_numbers.clear()
            win.pair_label.show_pair(None)
            win.flow_view.set_figure(None)
            return
        analyses = state.pair_analyses(pair)
        results = {fw: a.result for fw, a in analyses.items()}
        comps = {fw: a.comparison for fw, a in analyses.items()}
        series = {fw: a.series for fw, a in analyses.items()}
        modes = next((r.request.settings.modes for r in results.values()), MODES)
        win.pair_label.show_pair(pair)
        win.flow_view.set_figure(build_flow_figure(list(results.values()), pair)
                                 if is_stack(list(results.values())) else None)
        drawn = win.grid.set_data(pair, results, modes, comps, series=series)
        states = {state.progress.states.get(k) for k in state.loaded.keys_of(pair)}
        if not results and states & {"queued", "running"}:   # not "not run yet": it is on its way
            win.grid.show_message(f"{pair}: " + ("running… (elapsed and timeout above)"
                                                 if "running" in states else "queued…"))
        if drawn:                               # else the same results as shown: nothing to redo
            win.pair_numbers.show(pair, tuple(results.values()), comps, modes)

    def refresh(self) -> None:
        self.show(self.win.tree.current_pair())

    def schedule(self, key) -> None:
        """One redraw for results arriving close together; the batch end redraws anyway. When
        every framework of the shown pair has a result of this batch at the same stage (both
        partial, or both final), draw at once; else give the other the 30 ms debounce."""
        shown = self.win.tree.current_pair()
        pair = self.win.state.loaded.pair_name(key)
        if shown is not None and pair != shown:
            return
        if shown is not None and self.win.state.pair_in_step(pair):
            self.refresh()
        else:
            self._grid_timer.start()

    def set_all_views(self, view: str) -> None:
        grid = self.win.grid
        for name, row in grid.rows.items():
            if row.view_box.findData(view) >= 0:
                grid.set_view(name, view)

    def problem_selected(self, p) -> None:
        """A diagnostic clicked: show its op, and its tensor when it names one."""
        win = self.win
        if p.key and p.key in win.state.loaded.ops:
            win.tree.select_pair(win.state.loaded.pair_name(p.key))
        if p.tensor and p.tensor in win.grid.rows:
            self.tensor_clicked(p.tensor)

    def tensor_clicked(self, name: str) -> None:
        self.win.grid.highlight(name)
        self.win.numbers.select(name)
