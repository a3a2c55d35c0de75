"""The panels of one grid row: what each (framework, mode) column shows, or why it shows nothing.

numpy only. The notes here are the only wording of "no gradient", "run failed", "computing…": the
window and the exporters show them as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradviz.compare.verdicts import failed_text
from gradviz.model import RunResult, TensorResult, fixed_dtype
from gradviz.plots import series as S
from gradviz.plots.description import (
    COMPUTING,
    MINUS,
    PAIR_VIEWS,
    Column,
    Panel,
    PointSet,
    Row,
)
from gradviz.plots.palette import MODE_COLORS, OTHER_COLOR
from gradviz.plots.ticks import fmt
from gradviz.vocab import ErrorKind, Mode


def find(results: Sequence[RunResult], fw: str, op: str, tensor: str):
    """(result, tensor) of framework `fw`, op `op`; (None, None) when that framework did not run."""
    for r in results:
        if r.framework == fw and r.name == op:
            return r, r.tensor(tensor)
    return None, None


def missing_note(r: RunResult | None, t: TensorResult | None, mode: str, tensor: str) -> str:
    """Why (framework, mode) has no gradient of `tensor`, or "" when it has one."""
    if r is None:
        return "not run"
    if t is not None and t.grad(mode) is not None:
        return ""
    if t is not None and fixed_dtype(t.dtype):
        return f"{t.dtype} input: no gradient"
    if mode in r.mode_errors and r.mode_errors[mode].kind == ErrorKind.CANCELLED:
        return f"{mode}: {r.mode_errors[mode].message} (▶ Run computes it)"
    if mode in r.mode_errors:  # raised, or (numeric pass) timed out / crashed its worker
        return f"{mode} {failed_text(r.mode_errors[mode])}"
    if r.status != "ok" and r.error is not None:
        if mode == Mode.NUMERIC:  # numeric needs no backward: never another pass's error
            return (
                f"numeric not computed: the run stopped at an error ({r.error.type}, "
                "shown in custom/default)"
            )
        return f"run failed: {r.error.one_line()}"
    if r.partial and mode == Mode.NUMERIC:
        return COMPUTING
    if t is None:
        return f"no tensor '{tensor}' in {r.framework}"
    if mode in t.absent:
        why = t.absent[mode].strip()
        return why if why.lower().startswith("no gradient") else f"no gradient: {why}"
    if mode == Mode.NUMERIC and t.numeric is not None and t.numeric.method != "full":
        return f"numeric: {t.numeric.method} (no per-element values)"
    return "not computed"


def shape_text(shape) -> str:
    shape = tuple(shape)
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def shape_note(mode: str, g, t: TensorResult) -> str:
    """Why a gradient of another shape than its tensor is not drawn (one dot would say "a value")."""
    return (
        f"shape {shape_text(np.shape(g))} vs {shape_text(t.shape)}: the {mode} gradient does not "
        f"have the shape of {t.name}"
    )


def scalar_text(g) -> str:
    """A scalar gradient as a number: 9 significant digits (a float32 read back exactly)."""
    return f"{float(np.asarray(g, np.float64)):.9g}"


def grad_label(tensor: str) -> str:
    return f"∂loss/∂{tensor}"


def input_values(r: RunResult | None, t: TensorResult | None):
    """(x values, their name) of 'gradient vs input': the tensor's own value for inputs and
    parameters, else the first input of the same size (the op's argument for an elementwise op)."""
    if t is None:
        return None, ""
    if t.role in ("input", "param") and t.value is not None:
        return t.value, t.name
    # np.size(None) is 1 (no custom gradient): then only a one-element input is its x
    n = np.size(t.value) if t.value is not None else np.size(t.grad(Mode.CUSTOM))  # type: ignore[arg-type]
    for other in r.tensors if r is not None else ():
        if other.role == "input" and other.value is not None and np.size(other.value) == n:
            return other.value, other.name
    return None, ""


def _projection(common: dict, t: TensorResult) -> Panel:
    """Numeric on random directions (a large tensor): each mode's g·v against numeric g·v;
    points on the diagonal agree."""
    info = t.numeric
    assert info is not None, "make_panel draws projections only of a tensor with numeric info"
    num = info.projections.get(Mode.NUMERIC)
    sets = tuple(
        PointSet(m, MODE_COLORS.get(m, OTHER_COLOR), np.asarray(num, float), np.asarray(v, float))
        for m, v in info.projections.items()
        if m != Mode.NUMERIC and num is not None
    )
    common = dict(common, kind="projection")
    if not sets:
        return Panel(note="numeric: no projections", xlabel="numeric g·v", ylabel="g·v", **common)
    return Panel(
        points=sets,
        xlabel="numeric g·v",
        ylabel="mode g·v",
        info=f"{info.directions} random directions",
        **common,
    )


def _pair_panel(
    view: str, col: Column, row: Row, r, t, buckets: int, common: dict[str, Any], ylabel: str
) -> Panel:
    """A scatter or difference panel: two modes of one tensor against each other."""
    a, b = col.mode.split("~" if view == "scatter" else MINUS)
    ga = t.grad(a) if t is not None else None
    gb = t.grad(b) if t is not None else None
    labels: dict[str, Any]
    if view == "scatter":
        labels = dict(xlabel=f"{b} {ylabel}", ylabel=f"{a} {ylabel}")
    else:
        labels = dict(xlabel="element index", ylabel=f"{a} {MINUS} {b}")
    if ga is None or gb is None:
        missing = a if ga is None else b
        note = missing_note(r, t, missing, row.tensor)
        return Panel(note=note, waiting=note == COMPUTING, **labels, **common)
    for m, g in ((a, ga), (b, gb)):
        if np.shape(g) != tuple(t.shape):
            return Panel(note=shape_note(m, g, t), **labels, **common)
    if tuple(t.shape) == ():
        return Panel(
            note=f"{a} {MINUS} {b} = {scalar_text(np.float64(ga) - np.float64(gb))}"
            if view == "difference"
            else f"{a} {scalar_text(ga)} · {b} {scalar_text(gb)}",
            **labels,
            **common,
        )
    if view == "difference":
        d = np.asarray(ga, np.float64) - np.asarray(gb, np.float64)
        s = S.minmax_decimate(d, buckets=buckets)
        big = S.finite_range([np.abs(d)])
        info = f"max |{a} {MINUS} {b}| = {fmt(big[1]) if big else 'n/a'}" + (
            f", min/max of {buckets} buckets" if s.decimated else ""
        )
        n = int(np.size(d))
        return Panel(
            series=s,
            info=info,
            dots=n <= 60,
            nonfinite_text=s.nonfinite.text(),
            x_range=(0.0, float(max(n - 1, 1))),
            **labels,
            **common,
        )
    sc = S.scatter(gb, ga)
    info = f"{sc.shown:,} of {sc.n:,} points" if sc.shown < sc.n else f"{sc.n:,} points"
    nf = f"not finite: {sc.nonfinite:,}" if sc.nonfinite else ""
    return Panel(scatter=sc, info=info, nonfinite_text=nf, **labels, **common)


def make_panel(
    view: str,
    col: Column,
    row: Row,
    r,
    t,
    buckets: int,
    edges,
    verdict,
    curve: S.Series | None = None,
) -> Panel:
    """One panel; `curve` is the values view's series when already decimated elsewhere."""
    common: dict[str, Any] = dict(
        kind=view,
        title=col.label,
        color=col.color,
        dash=col.dash,
        framework=col.framework,
        mode=col.mode,
        verdict=verdict,
    )
    ylabel = grad_label(row.tensor)
    if view in PAIR_VIEWS:
        return _pair_panel(view, col, row, r, t, buckets, common, ylabel)

    g = t.grad(col.mode) if t is not None else None
    if g is None:
        if (
            col.mode == Mode.NUMERIC
            and t is not None
            and t.numeric is not None
            and t.numeric.method == "projection"
            and not (r is not None and r.partial)
        ):
            return _projection(common, t)
        xl = {
            "values": "element index",
            "histogram": ylabel,
            "heatmap": "column",
            "vs_input": "input value",
        }[view]
        yl = {"histogram": "count", "heatmap": "row"}.get(view, ylabel)
        note = missing_note(r, t, col.mode, row.tensor)
        return Panel(note=note, waiting=note == COMPUTING, xlabel=xl, ylabel=yl, **common)
    if np.shape(g) != tuple(t.shape):
        return Panel(
            note=shape_note(col.mode, g, t), xlabel="element index", ylabel=ylabel, **common
        )
    if tuple(t.shape) == ():  # a scalar is a number to read, not a one-point plot
        return Panel(note=f"{ylabel} = {scalar_text(g)}", xlabel="", ylabel=ylabel, **common)
    n = int(np.size(g))
    if view == "values":
        s = curve if curve is not None and curve.n == n else S.minmax_decimate(g, buckets=buckets)
        info = f"{n:,} elements" + (f", min/max of {buckets} buckets" if s.decimated else "")
        return Panel(
            series=s,
            xlabel="element index",
            ylabel=ylabel,
            info=info,
            dots=n <= 60,
            nonfinite_text=s.nonfinite.text(),
            x_range=(0.0, float(max(n - 1, 1))),
            **common,
        )
    if view == "histogram":
        h = S.histogram(g, edges)
        return Panel(
            hist=h,
            xlabel=ylabel,
            ylabel="count",
            info=f"{n:,} elements",
            nonfinite_text=h.nonfinite.text(),
            x_range=(edges[0], edges[-1]),
            **common,
        )
    if view == "heatmap":
        hm = S.heatmap(g)
        if hm is None:
            return Panel(
                note=f"heatmap needs a 2-D tensor (shape {tuple(np.shape(g))})",
                xlabel="column",
                ylabel="row",
                **common,
            )
        info = "×".join(map(str, hm.shape)) + (
            f", largest |g| per {hm.block[0]}×{hm.block[1]} block" if hm.block != (1, 1) else ""
        )
        return Panel(
            heatmap=hm,
            xlabel="column",
            ylabel="row",
            info=info,
            nonfinite_text=hm.nonfinite.text(),
            **common,
        )
    # vs_input
    value, name = input_values(r, t)
    if value is None or np.size(value) != n:
        return Panel(
            note="no input of the same size: not an elementwise view",
            xlabel="input value",
            ylabel=ylabel,
            **common,
        )
    s = S.vs_input(value, g, buckets=buckets)
    info = f"{n:,} elements" + (
        f"; {s.dropped:,} with non-finite input not placed" if s.dropped else ""
    )
    return Panel(
        series=s,
        xlabel=f"value of {name}",
        ylabel=ylabel,
        info=info,
        dots=True,
        nonfinite_text=s.nonfinite.text(),
        **common,
    )


def link_row(panels: list[Panel], view: str) -> list[Panel]:
    """One value range for the whole row (and the scatter's x = y range), so equal things look
    equal; projection panels have their own axes (g·v per direction)."""
    if view in ("values", "vs_input", "difference"):
        drawn = [p.series for p in panels if p.series is not None]
        # non-finite markers sit at y = 0
        ys = S.finite_range(
            [s.y for s in drawn] + [np.zeros(1) for s in drawn if s.nonfinite.total]
        )
        yr = S.padded_range(*ys) if ys else (-1.0, 1.0)
        xr = None
        if view == "vs_input":
            xs = S.finite_range([p.series.x for p in panels if p.series is not None])
            xr = S.padded_range(*xs, pad=0.02) if xs else (-1.0, 1.0)
        return [
            p if p.kind == "projection" else replace(p, y_range=yr, x_range=xr or p.x_range)
            for p in panels
        ]
    if view == "histogram":
        top: float = max(
            [int(p.hist.counts.max()) for p in panels if p.hist is not None and p.hist.counts.size]
            or [1]
        )
        return [
            p if p.kind == "projection" else replace(p, y_range=(0.0, max(top, 1) * 1.08))
            for p in panels
        ]
    if view == "scatter":
        rng = S.finite_range(
            [a for p in panels if p.scatter is not None for a in (p.scatter.x, p.scatter.y)]
        )
        r = S.padded_range(*rng) if rng else (-1.0, 1.0)
        return [replace(p, x_range=r, y_range=r) for p in panels]
    if view == "heatmap":
        m = S.finite_range([np.abs(p.heatmap.data) for p in panels if p.heatmap is not None])
        top = m[1] if m and m[1] > 0 else 1.0
        return [p if p.kind == "projection" else replace(p, y_range=(-top, top)) for p in panels]
    return panels


def projection_ranges(p: Panel) -> Panel:
    rng = S.finite_range([a for s in p.points for a in (s.x, s.y)])
    r = S.padded_range(*rng) if rng else (-1.0, 1.0)
    return replace(p, x_range=r, y_range=r)


def row_panels(
    results: Sequence[RunResult],
    row: Row,
    view: str,
    columns: Sequence[Column],
    buckets: int,
    curves: Mapping | None = None,
) -> tuple[Panel, ...]:
    """The linked panels of `row` drawn as `view`. `curves`: {(framework, tensor, mode): Series}
    of the values view decimated elsewhere (off the GUI thread), reused when given."""
    curves = curves or {}
    edges = None
    if view == "histogram":
        arrays = []
        for col in columns:
            _, t = find(results, col.framework, row.op, row.tensor)
            arrays.append(t.grad(col.mode) if t is not None else None)
        edges = S.shared_edges(arrays)
    line = []
    for col in columns:
        r, t = find(results, col.framework, row.op, row.tensor)
        curve = curves.get((col.framework, row.tensor, col.mode)) if view == "values" else None
        line.append(
            make_panel(view, col, row, r, t, buckets, edges, row.verdicts.get(col.framework), curve)
        )
    linked = link_row(line, view)
    return tuple(projection_ranges(p) if p.kind == "projection" else p for p in linked)
