"""The log scale of value-like views (values, difference): log10 |g|, one transform for the
window's grid and every exporter (issue 13 item 11.2), so a file shows what the window shows.
A log axis has no place for zero or a sign, so a panel becomes log10 |g| with the zero elements
left out (and counted in its note); non-finite values keep their count in the title line but
lose their markers, which sit at y = 0 and would read as |g| = 1. Other views stay linear.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from gradviz.plots.description import Panel
from gradviz.plots.series import NonFinite

LOG_KINDS = ("values", "difference")


def log_label(linear: str) -> str:
    """The y label on the log scale: what the linear label names, as log10 of its size
    ("∂loss/∂x" -> "log10 |∂loss/∂x|", "custom − default" -> "log10 |custom − default|")."""
    return f"log10 |{linear}|"


def log_panel(panel: Panel) -> Panel:
    """The panel on a log10 |g| axis: y holds log10 of the finite |g| > 0, the y range is in the
    same units, the y label says so and the note counts the zeros left out."""
    s = panel.series
    assert s is not None, "log_panel takes a panel with a series (wants_log)"
    y = np.abs(s.y)
    keep = y > 0
    dropped = int(y.size - np.count_nonzero(keep))
    info = "log10 |g|" + (
        f"; {dropped:,} zero point{'s' * (dropped != 1)} not drawn" if dropped else ""
    )
    if panel.info:
        info = panel.info + " · " + info
    if not keep.any():
        return replace(
            panel,
            series=None,
            note="all zero: nothing to draw on a log scale",
            info="",
            ylabel=log_label(panel.ylabel),
            log_y=True,
        )
    y = np.log10(y[keep])
    lo, hi = float(y.min()), float(y.max())
    if hi - lo < 1e-9:  # one value: a decade around it
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.05
    series = replace(
        s,
        x=s.x[keep],
        y=y,
        nonfinite=NonFinite(
            nan=s.nonfinite.nan, posinf=s.nonfinite.posinf, neginf=s.nonfinite.neginf
        ),
    )
    return replace(
        panel,
        series=series,
        y_range=(lo - pad, hi + pad),
        info=info,
        ylabel=log_label(panel.ylabel),
        log_y=True,
    )


def wants_log(panel: Panel, on: bool) -> bool:
    return on and panel.kind in LOG_KINDS and panel.series is not None


def log_row(panels: Sequence[Panel], on: bool) -> tuple[Panel, ...]:
    """A row's panels as drawn with the log scale `on`: the value-like ones as log10 |g|, all
    of them on one y range (the union of theirs), as a row's linear panels share theirs."""
    out = [log_panel(p) if wants_log(p, on) else p for p in panels]
    ranges = [p.y_range for p in out if p.log_y and p.series is not None and p.y_range is not None]
    if not ranges:
        return tuple(out)
    shared = (min(r[0] for r in ranges), max(r[1] for r in ranges))
    return tuple(replace(p, y_range=shared) if p.log_y and p.series is not None else p for p in out)
