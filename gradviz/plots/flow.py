"""The flow chart of a `stack` run described as plain data (numpy only, no Qt).

One chart per framework: layer on x (1 = input side, left), the L2 norm of the gradient at the
layer's input h{i} on a log scale, one series per mode in the grid's colours. A mode's gradient
that dies (zero or absent at a layer: nothing reaches the layers below) is marked at that layer.
Zero, absent and non-finite norms have no place on a log axis: they are not drawn as points; the
death marker and the chart's note say what happened there.

The window (gradviz/qt/flow_view.py) and the exporter (gradviz/qt/export/flow.py) draw this same
description with the same painter.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gradviz.flow import NOT_COMPUTED, FlowRow, dies_at, flow_of, layer_count, modes_of
from gradviz.model import FRAMEWORKS, RunResult
from gradviz.plots.figure import FRAMEWORK_LABEL, MODE_COLORS, LegendEntry
from gradviz.vocab import Mode

XLABEL = "layer (1 = input side)"
YLABEL = "‖∂loss/∂h_i‖₂ (log scale)"
DEAD_LABEL = "gradient dies (zero or absent) at this layer"
# (line width, dash, dot radius) per mode: drawn default first, widest, so a mode that equals
# another stays visible under it (custom = default = numeric for a correct op).
MODE_STYLE: dict[str, tuple[float, str, float]] = {
    Mode.DEFAULT: (3.4, "solid", 4.6),
    Mode.CUSTOM: (1.9, "solid", 3.2),
    Mode.NUMERIC: (1.3, "dash", 2.0),
}


@dataclass(frozen=True)
class FlowSeries:
    mode: str
    color: str
    layers: tuple[int, ...]  # layers with a positive finite norm (what a log axis shows)
    norms: tuple[float, ...]
    dies_at: int | None = None  # the layer where this mode's gradient dies, if it does
    width: float = 1.8
    dash: str = "solid"
    radius: float = 3.0


@dataclass(frozen=True)
class FlowChart:
    framework: str
    title: str  # "PyTorch · sign_ste"
    depth: int
    series: tuple[FlowSeries, ...]
    xlabel: str = XLABEL
    ylabel: str = YLABEL
    decades: tuple[int, int] = (-1, 1)  # log10 range of the y axis, shared by the charts
    note: str = ""  # shown instead of data, or under it (what is not drawn)

    @property
    def empty(self) -> bool:
        return not any(s.layers or s.dies_at for s in self.series)


@dataclass(frozen=True)
class FlowFigure:
    title: str
    subtitle: str
    charts: tuple[FlowChart, ...]
    legend: tuple[LegendEntry, ...]


def is_stack(results: Sequence[RunResult]) -> bool:
    return any(r.request.settings.graph == "stack" for r in results)


def _series(result: RunResult, flow: list[FlowRow], mode: str) -> FlowSeries:
    pts = [
        (row.layer, n)
        for row in flow
        if (n := row.norm.get(mode)) is not None and math.isfinite(n) and n > 0
    ]
    width, dash, radius = MODE_STYLE.get(mode, (1.8, "solid", 3.0))
    return FlowSeries(
        mode,
        MODE_COLORS.get(mode, "#444444"),
        tuple(p[0] for p in pts),
        tuple(float(p[1]) for p in pts),
        dies_at(flow, mode),
        width,
        dash,
        radius,
    )


def _note(result: RunResult, flow: list[FlowRow]) -> str:
    if result.status != "ok":
        err = result.error.one_line() if result.error is not None else "the run failed"
        return f"error: {err}"
    if not flow:
        return "no layers recorded"
    parts = []
    for mode in modes_of(result):
        bad = [
            row.layer
            for row in flow
            if (n := row.norm.get(mode)) is not None and not math.isfinite(n)
        ]
        if bad:
            parts.append(f"{mode} not finite at layer {', '.join(map(str, bad))}")
        skipped = [row for row in flow if row.absent.get(mode, "").startswith(NOT_COMPUTED)]
        if skipped:
            parts.append(f"{mode} {skipped[0].absent[mode]}")
    return "; ".join(dict.fromkeys(parts))


def _decades(charts: list[FlowChart]) -> tuple[int, int]:
    norms = [n for c in charts for s in c.series for n in s.norms]
    if not norms:
        return (-1, 1)
    lo, hi = math.floor(math.log10(min(norms))), math.ceil(math.log10(max(norms)))
    return (lo, hi) if hi > lo else (lo - 1, hi + 1)


def build_flow_figure(
    results: Sequence[RunResult],
    pair: str | None = None,
    flows: Sequence[Sequence[FlowRow]] | None = None,
) -> FlowFigure:
    """The flow chart of one op's stack runs (one RunResult per framework); `flows`: their
    flow rows (their analyses'), aligned with `results`; None: made here."""
    fl = [None] * len(results) if flows is None else list(flows)
    ran = [(r, f) for r, f in zip(results, fl) if r is not None]
    order: dict[str, int] = {fw: i for i, fw in enumerate(FRAMEWORKS)}
    ran.sort(key=lambda rf: order.get(rf[0].framework, len(order)))
    results = [r for r, _ in ran]
    name = pair or (results[0].name if results else "no op")
    charts, modes = [], []
    for r, rows in ran:
        flow = (flow_of(r) if rows is None else list(rows)) if r.status == "ok" else []
        ms = modes_of(r)
        modes += [m for m in ms if m not in modes]
        depth = layer_count(r) or int(getattr(r.request.settings, "depth", 0) or 0)
        charts.append(
            FlowChart(
                r.framework,
                f"{FRAMEWORK_LABEL.get(r.framework, r.framework)} · {name}",
                depth,
                tuple(_series(r, flow, m) for m in ms),
                note=_note(r, flow),
            )
        )
    decades = _decades(charts)
    charts = [
        FlowChart(c.framework, c.title, c.depth, c.series, decades=decades, note=c.note)
        for c in charts
    ]
    legend = tuple(
        LegendEntry(m, MODE_COLORS.get(m, "#444444"), MODE_STYLE.get(m, (0, "solid"))[1])
        for m in modes
    )
    depth = max([c.depth for c in charts] or [0])
    subtitle = _subtitle(results, depth)
    return FlowFigure(f"{name} — gradient flow through depth", subtitle, tuple(charts), legend)


def _subtitle(results: Sequence[RunResult], depth: int) -> str:
    if not results:
        return ""
    s = results[0].request.settings
    shape = "x".join(str(n) for n in s.shape)
    return (
        f"stack graph, {depth} layers of dense → op; L2 norm of the gradient at each layer's "
        f"input h_i · shape {shape}, {s.dtype}, seed {s.seed}, upstream {s.upstream}"
    )
