"""The grid's log scale (issue 13 item 11.2): value-like views (values, difference) drawn as
log10 |g|. A log axis has no place for zero or a sign, so the panel is turned into |g| with the
zero elements left out (and counted in the plot's note); non-finite values keep their corner
warning but lose their markers, which sit on y = 0. Other views stay linear.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from gradviz.plots.description import Panel
from gradviz.plots.series import NonFinite

LOG_KINDS = ("values", "difference")


def log_panel(panel: Panel) -> Panel:
    """The panel as drawn on a log y axis: only finite |g| > 0, a y range in log10 units."""
    s = panel.series
    y = np.abs(s.y)
    keep = y > 0
    dropped = int(y.size - np.count_nonzero(keep))
    info = "log |g|" + (f"; {dropped:,} zero points not drawn" if dropped else "")
    if panel.info:
        info = panel.info + " · " + info
    if not keep.any():
        return replace(panel, series=None, note="all zero: nothing to draw on a log scale",
                       info="", nonfinite_text=panel.nonfinite_text)
    y = y[keep]
    lo, hi = float(np.log10(y.min())), float(np.log10(y.max()))
    if hi - lo < 1e-9:                          # one value: a decade around it
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.05
    series = replace(s, x=s.x[keep], y=y, nonfinite=NonFinite(nan=s.nonfinite.nan,
                                                              posinf=s.nonfinite.posinf,
                                                              neginf=s.nonfinite.neginf))
    return replace(panel, series=series, y_range=(lo - pad, hi + pad), info=info)


def wants_log(panel: Panel, on: bool) -> bool:
    return on and panel.kind in LOG_KINDS and panel.series is not None
