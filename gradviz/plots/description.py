"""The parts of a grid figure, as plain frozen data (numpy only, no Qt): what to draw, not how.

A Figure has rows (tensors), and per row its panels ((framework, mode) columns, or mode pairs in
the scatter view). The window's grid (gradviz/qt/grid/) and every exporter (gradviz/qt/export/)
draw these same objects; only the painter differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from gradviz.plots import series as S
from gradviz.plots.palette import FRAMEWORK_DASH, mode_color
from gradviz.vocab import Mode

VIEWS = ("values", "histogram", "scatter", "difference", "heatmap", "vs_input")
VIEW_NAMES = {
    "values": "values",
    "histogram": "histogram",
    "scatter": "scatter",
    "difference": "difference",
    "heatmap": "heatmap",
    "vs_input": "vs input",
}
# What each view shows, for tooltips and menus.
VIEW_HELP = {
    "values": "each gradient element by index (min/max per bucket when large)",
    "histogram": "distribution of the gradient, bins shared across the row",
    "scatter": "custom against default and against numeric, element by element",
    "difference": "custom − default and custom − numeric, element by element",
    "heatmap": "a 2-D tensor's gradient as colours (largest |value| per block when large)",
    "vs_input": "each gradient element against the input value at that element (dots)",
}
# Scatter and difference panels compare two modes: (y mode, x mode) / (minuend, subtrahend).
SCATTER_PAIRS: tuple[tuple[str, str], ...] = (
    (Mode.CUSTOM, Mode.DEFAULT),
    (Mode.CUSTOM, Mode.NUMERIC),
)
PAIR_VIEWS = ("scatter", "difference")
MINUS = "−"  # "custom−default": the mode of a difference panel
COMPUTING = "numeric: computing…"


@dataclass(frozen=True)
class Column:
    framework: str
    mode: str  # a mode, or "custom~default" style pair in the scatter view
    label: str  # "torch · custom"

    @property
    def color(self) -> str:
        return mode_color(self.mode)

    @property
    def dash(self) -> str:
        return FRAMEWORK_DASH.get(self.framework, "solid")


@dataclass(frozen=True)
class Row:
    op: str
    tensor: str
    role: str
    shape: tuple
    dtype: str
    label: str  # "x · input · (200,) float32" (op prefixed when several ops)
    verdicts: Mapping[str, str] = field(default_factory=dict)  # framework -> verdict
    view: str = "values"  # how this row is drawn (rows may differ, as in the window)
    explanations: Mapping[str, str] = field(default_factory=dict)  # framework -> why that verdict


@dataclass(frozen=True)
class PointSet:
    """Dots of one colour, e.g. one mode's g·v against numeric g·v on random directions."""

    label: str
    color: str
    x: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class Panel:
    kind: str  # one of VIEWS, or "projection" (numeric on random directions)
    title: str
    xlabel: str
    ylabel: str
    color: str
    dash: str
    framework: str
    mode: str
    series: S.Series | None = None
    hist: S.Histogram | None = None
    scatter: S.Scatter | None = None
    heatmap: S.Heatmap | None = None
    points: tuple[PointSet, ...] = ()
    note: str = ""  # shown instead of data, e.g. "no gradient: graph cut by detach"
    nonfinite_text: str = ""  # "NaN 3 · +Inf 1"
    info: str = ""  # e.g. "1,000,000 elements, min/max of 800 buckets"
    verdict: str | None = None
    x_range: tuple[float, float] | None = None
    y_range: tuple[float, float] | None = None  # heatmap: the colour range
    dots: bool = False  # a series drawn as dots only (unordered points)
    waiting: bool = False  # its data is still being computed (a partial result)
    log_y: bool = False  # y holds log10 |g| (plots/logscale.py), not g

    @property
    def empty(self) -> bool:
        return not self.points and all(
            d is None for d in (self.series, self.hist, self.scatter, self.heatmap)
        )


@dataclass(frozen=True)
class LegendEntry:
    label: str
    color: str
    dash: str = "solid"
    marker: str = "line"  # "line" | "dot"


@dataclass(frozen=True)
class Figure:
    title: str
    subtitle: str
    view: str  # the view of every row, or "mixed"
    columns: tuple[Column, ...]  # of the main view
    rows: tuple[Row, ...]
    panels: tuple[tuple[Panel, ...], ...]  # [row][panel]; rows of other views differ
    legend: tuple[LegendEntry, ...]

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, panels in the widest row)."""
        return len(self.rows), max([len(p) for p in self.panels] or [len(self.columns)])
