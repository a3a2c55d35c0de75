"""The numbers table of the pair the grid shows, with its parity rows. Parity waits for the
numeric pass (a partial result would give rows that change a moment later); the run task makes
it for every pair it completes (EngineBridge.parityReady) and the analyses hold the rows. A pair
whose parity no run brings (its frameworks' results came from runs cut short) gets it from the
ParityWorker, off the GUI thread when the arrays are big: the table shows its rows when they come."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from gradviz.qt.numbers_table import NumbersTable
from gradviz.qt.parity_worker import ParityWorker


class PairNumbers(QObject):
    def __init__(self, table: NumbersTable, parent=None):
        super().__init__(parent)
        self.table = table
        self.parity_worker = ParityWorker(parent=self)
        self.parity_worker.ready.connect(self._parity_ready)
        self._shown: tuple | None = None  # (pair, results) the table shows
        self._last: tuple | None = None  # show()'s arguments while its parity is awaited
        # whether the running batch will bring a pair's parity (EngineBridge.parity_pending)
        self.pending: Callable[[str], bool] = lambda pair: False

    def show(self, pair: str, results: tuple, comps: dict, modes, analyses=()) -> None:
        """`analyses`: the pair's, aligned with `results`; their parity rows are shown once
        each has them."""
        from gradviz.app.parity_rows import parity_in_order

        self._shown, self._last = (pair, results), None
        if not results:
            rows, note = (), ""
        elif any(r.partial for r in results):
            rows, note = (), "waiting for the numeric pass…"
        elif analyses and all(a.parity is not None for a in analyses):
            rows, note = parity_in_order(analyses), ""
        elif self.pending(pair):
            rows, note = (), "computing…"
            self._last = (pair, results, comps, modes)
        else:
            rows = self.parity_worker.rows(pair, results)
            note = "computing…" if rows is None else ""
        self.table.set_data(comps, rows or (), modes, parity_note=note)

    def arrived(self, pair: str, analyses) -> None:
        """A pair's analyses with their parity rows (the run task's): shown if the table
        shows those very results."""
        from gradviz.app.parity_rows import parity_in_order

        shown = self._shown
        if shown and shown[0] == pair and _same_runs(shown[1], [a.result for a in analyses]):
            self._last = None
            self.table.set_parity(parity_in_order(analyses))

    def again(self) -> None:
        """A batch ended: a pair still awaiting parity it did not bring gets it the other way."""
        if self._last is not None and not self.pending(self._last[0]):
            self.show(*self._last)

    def clear(self) -> None:
        self._shown = self._last = None
        self.table.set_data({})

    def _parity_ready(self, pair: str, results: tuple, rows: list) -> None:
        self.parity_worker.accept(pair, results, rows)
        shown = self._shown
        if (
            shown
            and shown[0] == pair
            and len(shown[1]) == len(results)
            and all(a is b for a, b in zip(shown[1], results))
        ):
            self.table.set_parity(rows)

    def close(self) -> bool:
        return self.parity_worker.close()


def _same_runs(shown, results) -> bool:
    """The same runs by their requests (contract checks arriving replace a result object)."""
    mine = {id(r.request) for r in shown}
    return len(shown) == len(results) and all(id(r.request) in mine for r in results)
