"""Room for the grid (issue 28 item 6): at 1000x700 a stack run's flow chart and the tabs below
left the grid one row, cut. When the window is resized or the flow chart appears, the middle
splitter gives the grid two whole rows first, the flow chart at least its minimum height, and the
tabs what is left (down to their tab bar: a click on the splitter's handle, or a drag, gives them
room again); a window with room to spare keeps the splitter as it was. Between flow chart and
grid, the chart gets up to its preferred height from what two whole rows leave."""

from __future__ import annotations

from PySide6.QtWidgets import QSplitter

from gradviz.qt.flow_view import PREFERRED_HEIGHT


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
        if upper < need:
            total = upper + lower
            upper = min(need, total - self.tabs.tabBar().sizeHint().height())
            self.middle.setSizes([upper, total - upper])
        self.fit_flow()

    def fit_flow(self) -> None:
        """The flow chart as tall as two whole rows below it allow, up to PREFERRED_HEIGHT."""
        split = self.flow_view.parentWidget()
        if self.flow_view.isHidden() or not isinstance(split, QSplitter) or split.count() != 2:
            return
        flow, grid = split.sizes()
        total = flow + grid
        want = min(
            PREFERRED_HEIGHT,
            max(self.flow_view.minimumHeight(), total - self.grid.two_rows_height()),
        )
        if want != flow:
            split.setSizes([want, total - want])
