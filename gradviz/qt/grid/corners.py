"""Where a plot's corner note goes: the corner of the plot that covers the fewest drawn points
(matplotlib's legend loc="best"). A note fixed in the bottom-left corner hid exactly the data a
user looks for there: a gradient of zeros on a 0..1 axis, the left half of a 'vs input' plot.
Pure numpy over at most SAMPLE points, so it costs microseconds per call."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SAMPLE = 512  # points looked at per plot (evenly strided): enough to see a curve
CORNERS = ("bottom-left", "bottom-right", "top-left", "top-right")


def view_points(x, y) -> tuple[np.ndarray, np.ndarray] | None:
    """(x, y) as finite float arrays of at most SAMPLE points, or None when there are none."""
    if x is None or y is None:
        return None
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    n = min(x.size, y.size)
    if n == 0:
        return None
    step = max(1, n // SAMPLE)
    x, y = x[:n:step], y[:n:step]
    ok = np.isfinite(x) & np.isfinite(y)
    return (x[ok], y[ok]) if ok.any() else None


def emptiest_corner(
    points,
    view_range,
    size: tuple[float, float],
    box: tuple[float, float],
    order: Sequence[str] = CORNERS,
    taken: Sequence[str] = (),
) -> str:
    """The corner of `order` (not in `taken`) whose `box` (w, h pixels) covers the fewest of
    `points` ((x, y) in data coordinates) in a plot of `size` (w, h pixels) showing
    `view_range` (((x0, x1), (y0, y1))); ties go to the earlier corner of `order`."""
    free = [c for c in order if c not in taken] or list(order)
    if points is None:
        return free[0]
    (x0, x1), (y0, y1) = view_range
    w, h = size
    if not (x1 > x0 and y1 > y0 and w > 0 and h > 0):
        return free[0]
    px = (points[0] - x0) * (w / (x1 - x0))
    py = (y1 - points[1]) * (h / (y1 - y0))  # pixels from the top
    inside = (px >= 0) & (px <= w) & (py >= 0) & (py <= h)
    px, py = px[inside], py[inside]
    bw, bh = box

    def covered(corner: str) -> int:
        left = corner.endswith("left")
        top = corner.startswith("top")
        in_x = px <= bw if left else px >= w - bw
        in_y = py <= bh if top else py >= h - bh
        return int(np.count_nonzero(in_x & in_y))

    return min(free, key=covered)  # min keeps the first of equal counts
