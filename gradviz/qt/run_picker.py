"""The box beside the pair header that picks an earlier run of the shown op to draw this one
against (issue 28 item 5): its difference view then shows each mode now minus that run's
(plots/against.py). It lists the runs the app's history kept (gradviz.app.history)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox

NONE_TEXT = "against: none (pick an earlier run)"


class EarlierRunPicker(QComboBox):
    picked = Signal(object)  # the run number picked, or None

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setToolTip(
            "Draw this run against an earlier one of the op: the difference view "
            "shows each mode now minus that run's"
        )
        self.offer([])
        self.currentIndexChanged.connect(lambda _i: self.picked.emit(self.number()))

    def offer(self, runs: list[tuple[int, str]]) -> None:
        """(number, label) of the earlier runs, newest first; the pick stays when still offered."""
        keep = self.number()
        self.blockSignals(True)
        self.clear()
        self.addItem(NONE_TEXT if runs else "no earlier run", None)
        for number, label in runs:
            self.addItem(f"against {label}", number)
        i = self.findData(keep) if keep is not None else -1
        self.setCurrentIndex(max(i, 0))
        self.setEnabled(bool(runs))
        self.blockSignals(False)

    def number(self) -> int | None:
        return self.currentData()

    def pick(self, number: int | None) -> None:
        i = self.findData(number) if number is not None else 0
        if i < 0:
            raise ValueError(
                f"run {number} is not offered: {[self.itemText(j) for j in range(self.count())]}"
            )
        self.setCurrentIndex(i)
