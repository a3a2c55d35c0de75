"""Drawing one row of the grid from its figure description: its header, then a plot per panel
(a plot kept from the last fill gets new data only, or waits under "computing…"), its axis links
and the context-menu entries of each plot (gradviz.qt.grid.view keeps the rows)."""

from __future__ import annotations

from dataclasses import replace

from gradviz.plots import figure as F
from gradviz.plots import series as S
from gradviz.plots.logscale import log_row
from gradviz.qt.grid.cell import Cell
from gradviz.qt.grid.draw import draw, values_kind
from gradviz.qt.grid.links import link
from gradviz.qt.grid.row import TensorRow


def fill(grid, row: TensorRow) -> None:
    """Draw `row` of GridView `grid` in its view, from the grid's described results."""
    view = row.view()
    desc = replace(grid._row_desc[row.name], view=view)
    columns = F.grid_columns(grid._described, view, grid.modes, grid.against_label())
    panels = log_row(
        F.row_panels(grid._described, desc, view, columns, S.DEFAULT_BUCKETS, grid._curves),
        grid.log_scale,
    )
    row.show_header(desc)
    row.cells = []
    row.used = 0
    for col, panel in enumerate(panels):
        if panel.waiting and waitable(row, col, panel):
            # last run's curve stays in place, hidden under one reusable note: a re-run then
            # only sets data, with no reset, axes or layout change (~90 ms less)
            slot = row.plots[col]
            row.used = col + 1
            slot.wait(True)
            row.cells.append(
                Cell(panel.framework, panel.mode, slot, False, panel.note, panel=panel)
            )
            continue
        log = panel.log_y and panel.series is not None
        kind = values_kind(panel)
        # log10 |g| drawn on a linear axis, as the exporters draw it: a reused plot keeps
        # to one of the two (no zero line on a log plot)
        slot = row.plot(col, kind + ("log",) if log and kind else kind)
        slot.style(panel)
        cell = Cell(panel.framework, panel.mode, slot, True, panel=panel)
        draw(cell, panel)
        row.cells.append(cell)
    row.set_groups([c.framework for c in row.cells])
    row.retire_unused()
    link(row.cells)
    if grid.plot_menu_hook is not None:
        for c in row.cells:
            menu = c.slot.vb.menu
            c.slot.drop_menu_actions()
            if menu is not None:
                before = set(menu.actions())
                menu.addSeparator()
                grid.plot_menu_hook(menu, row.name, c.framework, c.mode)
                # removed again when the plot is reused for another tensor or mode
                c.slot.menu_actions = [a for a in menu.actions() if a not in before]


def waitable(row: TensorRow, col: int, panel) -> bool:
    """Whether column `col` still shows last run's values curve of this panel's mode."""
    if panel.kind != "values" or col >= len(row.plots):
        return False
    slot = row.plots[col]
    return (
        slot.kind is not None
        and slot.kind[:3] == ("values", panel.framework, panel.mode)
        and slot.curve is not None
    )
