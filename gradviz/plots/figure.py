"""A grid figure described as plain data: what to draw, not how (numpy only, no Qt).

Rows are tensors (per op, in graph order: inputs, params, intermediates, output); columns are the
(framework, mode) pairs present: torch default, torch custom, torch numeric, tf default, ...
Every panel holds already-reduced data (see series.py), its title, axis labels, a note when there
is nothing to draw ("no gradient: ..."), its non-finite counts and the verdict of its row and
framework. Panels of one row share their value range, so equal things look equal.

The window draws these with pyqtgraph or the figure painter; the exporters (gradviz/qt/
figure_painter.py) draw them to PNG/SVG/PDF. Select the whole grid, a row or a panel with
`select_row` / `select_panel`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from gradviz.model import FIXED_DTYPES, FRAMEWORKS, MODES, ROLES, RunResult, TensorResult
from gradviz.plots import series as S

VIEWS = ("values", "histogram", "scatter", "heatmap", "vs_input")

# Fixed colours per mode (readable in print and by most colour-blind readers).
MODE_COLORS = {"default": "#3467b0", "custom": "#e07b00", "numeric": "#2a9d4b"}
# Frameworks: column header and line style.
FRAMEWORK_DASH = {"torch": "solid", "tf": "dash"}
FRAMEWORK_LABEL = {"torch": "PyTorch", "tf": "TensorFlow"}
VERDICT_COLORS = {"match": "#2a9d4b", "surrogate": "#3467b0", "differs": "#c62828",
                  "non-finite": "#d1495b", "broken": "#6d6d6d", "error": "#8e1b1b",
                  "no-gradient": "#555555"}
# Scatter panels compare two modes: (y mode, x mode).
SCATTER_PAIRS = (("custom", "default"), ("custom", "numeric"))


@dataclass(frozen=True)
class Column:
    framework: str
    mode: str                       # a mode, or "custom~default" style pair in the scatter view
    label: str                      # "torch · custom"

    @property
    def color(self) -> str:
        return MODE_COLORS.get(self.mode.split("~")[0], "#444444")

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
    label: str                      # "x · input · (200,) float32" (op prefixed when several ops)
    verdicts: Mapping[str, str] = field(default_factory=dict)   # framework -> verdict
    view: str = "values"            # how this row is drawn (rows may differ, as in the window)


@dataclass(frozen=True)
class Panel:
    kind: str                       # one of VIEWS
    title: str
    xlabel: str
    ylabel: str
    color: str
    dash: str
    framework: str
    mode: str
    series: Optional[S.Series] = None
    hist: Optional[S.Histogram] = None
    scatter: Optional[S.Scatter] = None
    heatmap: Optional[S.Heatmap] = None
    note: str = ""                  # shown instead of data, e.g. "no gradient: graph cut by detach"
    nonfinite_text: str = ""        # "NaN 3 · +Inf 1"
    info: str = ""                  # e.g. "1,000,000 elements, min/max of 800 buckets"
    verdict: Optional[str] = None
    x_range: Optional[tuple[float, float]] = None
    y_range: Optional[tuple[float, float]] = None   # heatmap: the colour range

    @property
    def empty(self) -> bool:
        return all(d is None for d in (self.series, self.hist, self.scatter, self.heatmap))


@dataclass(frozen=True)
class LegendEntry:
    label: str
    color: str
    dash: str = "solid"


@dataclass(frozen=True)
class Figure:
    title: str
    subtitle: str
    view: str                                      # the view of every row, or "mixed"
    columns: tuple[Column, ...]                    # of the main view
    rows: tuple[Row, ...]
    panels: tuple[tuple[Panel, ...], ...]          # [row][panel]; a scatter row has fewer panels
    legend: tuple[LegendEntry, ...]

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, panels in the widest row)."""
        return len(self.rows), max([len(p) for p in self.panels] or [len(self.columns)])


# --- verdicts ------------------------------------------------------------------------------------

def verdicts_from(comparisons: Optional[Iterable[Any]]) -> dict[tuple[str, str, str], str]:
    """{(framework, op, tensor): verdict} from compare.OpComparison-like objects (duck-typed:
    .framework, .name, .tensors[i].name/.verdict) or from such a dict passed through."""
    if comparisons is None:
        return {}
    if isinstance(comparisons, Mapping):
        return {tuple(k): str(v) for k, v in comparisons.items()}
    out = {}
    for c in comparisons:
        for t in getattr(c, "tensors", ()):
            v = getattr(t, "verdict", None)
            if v:
                out[(c.framework, c.name, t.name)] = str(v)
    return out


# --- building ------------------------------------------------------------------------------------

def _modes_present(results: Sequence[RunResult], fw: str) -> list[str]:
    seen = set()
    for r in results:
        if r.framework != fw:
            continue
        for t in r.tensors:
            seen.update(t.grads)
            seen.update(t.absent)
        seen.update(r.mode_errors)
    return [m for m in MODES if m in seen]


def _columns(results: Sequence[RunResult], view: str) -> list[Column]:
    cols = []
    fws = [fw for fw in FRAMEWORKS if any(r.framework == fw for r in results)]
    fws += sorted({r.framework for r in results} - set(fws))
    for fw in fws:
        modes = _modes_present(results, fw)
        if view == "scatter":
            for a, b in SCATTER_PAIRS:
                if a in modes and b in modes:
                    cols.append(Column(fw, f"{a}~{b}", f"{fw} · {a} vs {b}"))
        else:
            cols.extend(Column(fw, m, f"{fw} · {m}") for m in modes)
    return cols


def _rows(results: Sequence[RunResult], verdicts: Mapping) -> list[Row]:
    ops = []
    for r in results:
        if r.name not in ops:
            ops.append(r.name)
    several = len(ops) > 1
    rows = []
    for op in ops:
        found: dict[str, TensorResult] = {}
        for r in results:
            if r.name == op:
                for t in r.tensors:
                    found.setdefault(t.name, t)
        rank = {role: i for i, role in enumerate(ROLES)}
        first = {n: i for i, n in enumerate(found)}
        names = sorted(found, key=lambda n: (rank.get(found[n].role, len(ROLES)), first[n]))
        for n in names:
            t = found[n]
            shape = "(" + ", ".join(str(s) for s in t.shape) + ("," if len(t.shape) == 1 else "") + ")"
            label = f"{t.name} · {t.role} · {shape} {t.dtype}"
            v = {r.framework: verdicts[(r.framework, op, n)] for r in results
                 if r.name == op and (r.framework, op, n) in verdicts}
            rows.append(Row(op, n, t.role, tuple(t.shape), t.dtype,
                            f"{op}: {label}" if several else label, v))
    return rows


def _find(results: Sequence[RunResult], fw: str, op: str, tensor: str):
    for r in results:
        if r.framework == fw and r.name == op:
            return r, r.tensor(tensor)
    return None, None


def _missing_note(r: Optional[RunResult], t: Optional[TensorResult], mode: str) -> str:
    if r is None:
        return "not run"
    if r.status != "ok" and r.error is not None:
        return f"error: {r.error.one_line()}"
    if t is not None and t.dtype in FIXED_DTYPES:
        return f"{t.dtype} input: no gradient"
    if mode in r.mode_errors:
        return f"{mode} raised: {r.mode_errors[mode].one_line()}"
    if t is None:
        return "no such tensor"
    if mode in t.absent:
        return f"no gradient: {t.absent[mode]}"
    if mode == "numeric" and t.numeric is not None and t.numeric.method != "full":
        return f"numeric: {t.numeric.method} (no per-element values)"
    return "no gradient"


def _grad_label(tensor: str) -> str:
    return f"∂loss/∂{tensor}"


def _panel(view: str, col: Column, row: Row, r, t, buckets: int, edges, verdict) -> Panel:
    common = dict(kind=view, title=col.label, color=col.color, dash=col.dash,
                  framework=col.framework, mode=col.mode, verdict=verdict)
    ylabel = _grad_label(row.tensor)
    if view == "scatter":
        a, b = col.mode.split("~")
        ga = t.grad(a) if t is not None else None
        gb = t.grad(b) if t is not None else None
        labels = dict(xlabel=f"{b} {ylabel}", ylabel=f"{a} {ylabel}")
        if ga is None or gb is None or np.size(ga) != np.size(gb):
            missing = a if ga is None else b
            return Panel(note=_missing_note(r, t, missing), **labels, **common)
        sc = S.scatter(gb, ga)
        info = f"{sc.shown:,} of {sc.n:,} points" if sc.shown < sc.n else f"{sc.n:,} points"
        nf = f"not finite: {sc.nonfinite:,}" if sc.nonfinite else ""
        return Panel(scatter=sc, info=info, nonfinite_text=nf, **labels, **common)

    g = t.grad(col.mode) if t is not None else None
    if g is None:
        xl = {"values": "element index", "histogram": ylabel, "heatmap": "column",
              "vs_input": f"value of {row.tensor}"}[view]
        yl = {"histogram": "count", "heatmap": "row"}.get(view, ylabel)
        return Panel(note=_missing_note(r, t, col.mode), xlabel=xl, ylabel=yl, **common)
    n = int(np.size(g))
    if view == "values":
        s = S.minmax_decimate(g, buckets=buckets)
        info = f"{n:,} elements" + (f", min/max of {buckets} buckets" if s.decimated else "")
        return Panel(series=s, xlabel="element index", ylabel=ylabel, info=info,
                     nonfinite_text=s.nonfinite.text(), x_range=(0.0, max(n - 1, 1)), **common)
    if view == "histogram":
        h = S.histogram(g, edges)
        return Panel(hist=h, xlabel=ylabel, ylabel="count", info=f"{n:,} elements",
                     nonfinite_text=h.nonfinite.text(), x_range=(edges[0], edges[-1]), **common)
    if view == "heatmap":
        hm = S.heatmap(g)
        if hm is None:
            return Panel(note=f"heatmap needs a 2-D tensor (shape {tuple(np.shape(g))})",
                         xlabel="column", ylabel="row", **common)
        info = f"{hm.shape}" + (f", max |g| per {hm.block[0]}x{hm.block[1]} block"
                                if hm.block != (1, 1) else "")
        return Panel(heatmap=hm, xlabel="column", ylabel="row", info=info,
                     nonfinite_text=hm.nonfinite.text(), **common)
    # vs_input
    value = t.value
    xl = f"value of {row.tensor}"
    if value is None or np.size(value) != n:
        return Panel(note="no forward value of the same size to plot against", xlabel=xl,
                     ylabel=ylabel, **common)
    s = S.vs_input(value, g, buckets=buckets)
    info = f"{n:,} elements, sorted by value" + (f"; {s.dropped:,} with non-finite value not drawn"
                                                   if s.dropped else "")
    return Panel(series=s, xlabel=xl, ylabel=ylabel, info=info,
                 nonfinite_text=s.nonfinite.text(), **common)


def _link_row(panels: list[Panel], view: str) -> list[Panel]:
    """One value range for the whole row (and the scatter's x = y range)."""
    if view in ("values", "vs_input"):
        ys = S.finite_range([p.series.y for p in panels if p.series is not None])
        yr = S.padded_range(*ys) if ys else (-1.0, 1.0)
        out = []
        for p in panels:
            xr = p.x_range
            if p.series is not None and view == "vs_input":
                xs = S.finite_range([p.series.x])
                xr = S.padded_range(*xs, pad=0.02) if xs else (-1.0, 1.0)
            out.append(replace(p, y_range=yr, x_range=xr))
        return out
    if view == "histogram":
        top = max([int(p.hist.counts.max()) for p in panels if p.hist is not None and p.hist.counts.size]
                  or [1])
        return [replace(p, y_range=(0.0, max(top, 1) * 1.08)) for p in panels]
    if view == "scatter":
        rng = S.finite_range([a for p in panels if p.scatter is not None
                              for a in (p.scatter.x, p.scatter.y)])
        r = S.padded_range(*rng) if rng else (-1.0, 1.0)
        return [replace(p, x_range=r, y_range=r) for p in panels]
    if view == "heatmap":
        m = S.finite_range([np.abs(p.heatmap.data) for p in panels if p.heatmap is not None])
        top = m[1] if m and m[1] > 0 else 1.0
        return [replace(p, y_range=(-top, top)) for p in panels]
    return panels


def build_figure(results: Sequence[RunResult], view: str = "values", comparisons=None,
                 title: Optional[str] = None, buckets: int = S.DEFAULT_BUCKETS,
                 row_views: Optional[Mapping] = None) -> Figure:
    """The grid of all tensors x (framework, mode) of `results` (one or several ops).

    `comparisons`: compare.OpComparison objects, or {(framework, op, tensor): verdict}; optional.
    `row_views`: {tensor name or (op, tensor): view} for rows drawn differently from `view`.
    """
    row_views = dict(row_views or {})
    for v in [view, *row_views.values()]:
        if v not in VIEWS:
            raise ValueError(f"view {v!r}: use one of {', '.join(VIEWS)}")
    results = list(results)
    verdicts = verdicts_from(comparisons)
    columns = {}
    rows = []
    panels = []
    for row in _rows(results, verdicts):
        rv = row_views.get((row.op, row.tensor), row_views.get(row.tensor, view))
        row = replace(row, view=rv)
        if rv not in columns:
            columns[rv] = _columns(results, rv)
        edges = None
        if rv == "histogram":
            arrays = []
            for col in columns[rv]:
                _, t = _find(results, col.framework, row.op, row.tensor)
                arrays.append(t.grad(col.mode) if t is not None else None)
            edges = S.shared_edges(arrays)
        line = []
        for col in columns[rv]:
            r, t = _find(results, col.framework, row.op, row.tensor)
            line.append(_panel(rv, col, row, r, t, buckets, edges, row.verdicts.get(col.framework)))
        rows.append(row)
        panels.append(tuple(_link_row(line, rv)))
    ops = list(dict.fromkeys(r.name for r in results))
    views = list(dict.fromkeys(r.view for r in rows)) or [view]
    fig_view = views[0] if len(views) == 1 else "mixed"
    if title is None:
        what = fig_view.replace("_", " ") if fig_view != "mixed" else ", ".join(v.replace("_", " ") for v in views)
        title = f"{', '.join(ops) or 'no op'} — gradients ({what})"
    legend = []
    for v in views:
        for e in _legend(columns.get(v) or _columns(results, v), v):
            if e not in legend:
                legend.append(e)
    return Figure(title, _subtitle(results), fig_view, tuple(columns.get(view) or _columns(results, view)),
                  tuple(rows), tuple(panels), tuple(legend))


def _subtitle(results: Sequence[RunResult]) -> str:
    parts = []
    for r in results:
        s = r.request.settings
        dev = r.device or s.device
        txt = f"{r.framework} {r.framework_version}".strip() + f" on {dev}"
        if txt not in parts:
            parts.append(txt)
    if results:
        s = results[0].request.settings
        parts.append(f"graph {s.graph}, {s.dtype}, seed {s.seed}, upstream {s.upstream}")
    return " · ".join(parts)


def _legend(columns: Sequence[Column], view: str) -> tuple[LegendEntry, ...]:
    modes = list(dict.fromkeys(c.mode.split("~")[0] for c in columns))
    fws = list(dict.fromkeys(c.framework for c in columns))
    out = [LegendEntry(m if view != "scatter" else f"{m} (y) vs other mode (x)", MODE_COLORS.get(m, "#444444"))
           for m in modes]
    if view in ("values", "vs_input"):
        out += [LegendEntry(FRAMEWORK_LABEL.get(f, f), "#333333", FRAMEWORK_DASH.get(f, "solid")) for f in fws]
    return tuple(out)


# --- selecting -----------------------------------------------------------------------------------

def _row_index(fig: Figure, row) -> int:
    if isinstance(row, int):
        if not -len(fig.rows) <= row < len(fig.rows):
            raise IndexError(f"row {row}: the figure has {len(fig.rows)} rows")
        return row % len(fig.rows)
    for i, r in enumerate(fig.rows):
        if row in (r.tensor, (r.op, r.tensor)):
            return i
    raise KeyError(f"no row {row!r}; rows: {', '.join(r.tensor for r in fig.rows)}")


def _col_index(fig: Figure, i: int, col) -> int:
    panels = fig.panels[i]
    if isinstance(col, int):
        if not -len(panels) <= col < len(panels):
            raise IndexError(f"panel {col}: row {fig.rows[i].tensor} has {len(panels)} panels")
        return col % len(panels)
    for j, p in enumerate(panels):
        if col in ((p.framework, p.mode), p.title):
            return j
    raise KeyError(f"no panel {col!r} in row {fig.rows[i].tensor}; "
                   f"panels: {', '.join(p.title for p in panels)}")


def select_row(fig: Figure, row) -> Figure:
    """The figure of one row: `row` is an index, a tensor name or (op, tensor)."""
    i = _row_index(fig, row)
    r = fig.rows[i]
    return replace(fig, title=f"{fig.title} — {r.tensor}", rows=(r,), panels=(fig.panels[i],),
                   view=r.view)


def select_panel(fig: Figure, row, col) -> Figure:
    """The figure of one panel: `col` is an index in the row, (framework, mode) or a panel title."""
    i = _row_index(fig, row)
    j = _col_index(fig, i, col)
    p = fig.panels[i][j]
    mode = p.mode.split("~")[0]
    legend = tuple(e for e in fig.legend
                   if e.label.split(" ")[0] in (mode, FRAMEWORK_LABEL.get(p.framework)))
    r = fig.rows[i]
    r = replace(r, verdicts={k: v for k, v in r.verdicts.items() if k == p.framework})
    return replace(fig, title=f"{fig.title} — {r.tensor}, {p.title}", rows=(r,),
                   panels=((p,),), legend=legend, view=fig.rows[i].view)
