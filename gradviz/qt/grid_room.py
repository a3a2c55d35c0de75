"""Room for the grid (issue 28 item 6): at 1000x700 a stack run's flow chart (200 px, less does
not read) and the tabs below left the grid one row, cut. When the window is resized or the flow
chart appears, the middle splitter gives the grid two whole rows first, the flow chart its
height, and the tabs what is left (down to their tab bar: a click on the splitter's handle, or a
drag, gives them room again); a window with room to spare keeps the splitter as it was."""

from __future__ import annotations

from PySide6.QtWidgets import QSplitter


class GridRoom:
    def __init__(self, middle: QSplitter, center, tabs, grid, flow_view, pair_label) -> None:
        self.middle, self.center, self.tabs = middle, center, tabs
        self.grid, self.flow_view, self.pair_label = grid, flow_view, pair_label

    def needed(self) -> int:
        """The middle's upper part with two whole rows in the grid (and the flow chart shown)."""
        split = self.flow_view.parentWidget()
        flow = (
            self.flow_view.minimumHeight() + split.handleWidth()
            if not self.flow_view.isHidden()
            else 0
        )
        return self.pair_label.sizeHint().height() + flow + self.grid.two_rows_height() + 8

    def fit(self) -> None:
        if not self.grid.rows:
            return
        upper, lower = self.middle.sizes()
        need = self.needed()
        if upper >= need:
            return
        total = upper + lower
        upper = min(need, total - self.tabs.tabBar().sizeHint().height())
        self.middle.setSizes([upper, total - upper])
