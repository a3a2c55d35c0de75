"""The numbers table of the pair the grid shows, with its torch-vs-TF parity rows. Parity waits
for the numeric pass (a partial result would give rows that change a moment later) and runs off
the GUI thread when the arrays are big (ParityWorker): the table shows its rows when they come."""

from __future__ import annotations

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

    def show(self, pair: str, results: tuple, comps: dict, modes) -> None:
        self._shown = (pair, results)
        if any(r.partial for r in results):
            rows, note = (), "waiting for the numeric pass…"
        else:
            rows = self.parity_worker.rows(pair, results)
            note = "computing…" if rows is None else ""
        self.table.set_data(comps, rows or (), modes, parity_note=note)

    def clear(self) -> None:
        self._shown = None
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
