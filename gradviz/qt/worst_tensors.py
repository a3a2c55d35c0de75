"""The "Worst tensors" tab: every tensor of every op and framework the window holds a result of,
in one sortable table, worst verdict first and the larger error first among equals. A stack run
of 34 tensors showed 3 rows at a time per op; here the whole run is one list to triage. Double-
click (or Enter on) a row: its op is shown and its tensor highlighted."""

from __future__ import annotations

from PySide6.QtCore import QTimer

from gradviz.qt.numbers_table import NumbersTable


class WorstTensors:
    """Fills `table` from `state`'s results; a row gone to selects its op in `tree` and, when the
    `grid` shows that tensor, has `pair_view` follow it."""

    def __init__(self, state, table: NumbersTable, tree, grid, pair_view, parent=None) -> None:
        self.state, self.table, self.tree, self.grid, self.pair_view = (
            state,
            table,
            tree,
            grid,
            pair_view,
        )
        # results arrive a few per second in a big run: one refill for those close together
        self._timer = QTimer(parent)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self.refresh)

    def connect(self) -> None:
        s = self.state
        s.subscribe("result", lambda *_a: self._timer.start())
        s.subscribe("file_removed", lambda *_a: self._timer.start())
        s.subscribe("run_finished", lambda *_a: self.refresh())
        self.table.rowActivated.connect(self.go_to)

    def refresh(self) -> None:
        self._timer.stop()
        state = self.state
        ops = []
        for key, a in state.results.analyses().items():
            if key not in state.loaded.ops:
                continue
            ops.append((state.loaded.pair_name(key), key[0], a.comparison))
        ops.sort(key=lambda o: (o[0], o[1]))
        self.table.set_run(ops)

    def go_to(self, op: str, tensor: str, _framework: str) -> None:
        self.tree.select_pair(op)
        if tensor in self.grid.rows:
            self.pair_view.tensor_clicked(tensor)
