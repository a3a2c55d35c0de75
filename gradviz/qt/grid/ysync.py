"""A row's plots kept on one y range: links.py makes the sync, cell.py undoes it when a plot is
reused. It knows a plot only by its `vb`, `item` and `ysync` (a cell.CellPlot) and imports no grid
module, so those two import it rather than each other."""

from __future__ import annotations


def sync_y(slots: list) -> None:
    """One y range for a row, in data coordinates. pyqtgraph's own y link lines views up by
    screen position, which shifts the range of a cell whose plot area sits a few pixels lower."""
    for s in slots:
        unsync_y(s)
    busy = [False]

    def follow(source):
        def apply(_vb, y_range):
            if busy[0]:
                return
            busy[0] = True
            try:
                for s in slots:
                    if s is not source:
                        s.item.setYRange(*y_range, padding=0)
            finally:
                busy[0] = False

        return apply

    for s in slots:
        s.ysync = follow(s)
        s.vb.sigYRangeChanged.connect(s.ysync)


def unsync_y(slot) -> None:
    if slot.ysync is not None:
        try:
            slot.vb.sigYRangeChanged.disconnect(slot.ysync)
        except (RuntimeError, TypeError):
            pass
        slot.ysync = None
