"""A grid figure described as plain data: what to draw, not how (numpy only, no Qt).

Rows are tensors (per op, in graph order: inputs, params, intermediates, output); columns are the
(framework, mode) pairs asked for or present: torch default, torch custom, torch numeric, tf
default, ... Every panel holds already-reduced data (see series.py), its title, axis labels, a
note when there is nothing to draw ("no gradient: ..."), its non-finite counts and the verdict of
its row and framework. Panels of one row share their value range, so equal things look equal.

This description is the only one: the window's grid (gradviz/qt/grid/) draws its rows with
pyqtgraph and the exporters (gradviz/qt/export/) draw the whole figure to PNG/SVG/PDF, so what
the window shows is what a file gets. Select the whole grid, a row or a panel with `select_row` /
`select_panel`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from gradviz.compare.verdicts import TensorComparison, shown_verdict
from gradviz.model import FRAMEWORKS, MODES, ROLES, RunResult, TensorResult
from gradviz.plots import series as S
from gradviz.plots.against import against_pairs
from gradviz.plots.description import (
    COMPUTING,
    MINUS,
    SCATTER_PAIRS,
    VIEW_NAMES,
    VIEWS,
    Column,
    Figure,
    LegendEntry,
    Panel,
    PointSet,
    Row,
)
from gradviz.plots.logscale import log_row
from gradviz.plots.palette import (
    FRAMEWORK_DASH,
    FRAMEWORK_LABEL,
    MODE_COLORS,
    OTHER_COLOR,
    VERDICT_TEXT,
    mode_color,
)
from gradviz.plots.panels import row_panels, shape_text

__all__ = [
    "COMPUTING",
    "SCATTER_PAIRS",
    "VIEW_NAMES",
    "VIEWS",
    "Column",
    "Figure",
    "LegendEntry",
    "Panel",
    "PointSet",
    "Row",
    "FRAMEWORK_DASH",
    "FRAMEWORK_LABEL",
    "MODE_COLORS",
    "VERDICT_TEXT",
    "verdicts_from",
    "explanations_from",
    "grid_rows",
    "grid_columns",
    "row_panels",
    "build_figure",
    "select_row",
    "select_panel",
    "views_for",
]


# --- verdicts ------------------------------------------------------------------------------------


def _comparison_items(comparisons) -> list:
    if comparisons is None or isinstance(comparisons, Mapping):
        return []
    return [c for c in comparisons if c is not None]


def verdicts_from(comparisons: Iterable[Any] | None) -> dict[tuple[str, str, str], str]:
    """{(framework, op, tensor): verdict} from compare.OpComparison-like objects (duck-typed:
    .framework, .name, .tensors[i].name/.verdict) or from such a dict passed through."""
    if isinstance(comparisons, Mapping):
        return {tuple(k): str(v) for k, v in comparisons.items()}
    out = {}
    for c in _comparison_items(comparisons):
        for t in getattr(c, "tensors", ()):
            # as the window labels it: "match, numeric cancelled" is no verdict colour
            v = shown_verdict(t) if isinstance(t, TensorComparison) else getattr(t, "verdict", None)
            if v:
                out[(c.framework, c.name, t.name)] = str(v)
    return out


def explanations_from(comparisons) -> dict[tuple[str, str, str], str]:
    """{(framework, op, tensor): why that verdict} where a comparison says why."""
    out = {}
    for c in _comparison_items(comparisons):
        for t in getattr(c, "tensors", ()):
            why = getattr(t, "explanation", "")
            if why:
                out[(c.framework, c.name, t.name)] = str(why)
    return out


# --- building ------------------------------------------------------------------------------------


def _modes_of(results: Sequence[RunResult], fw: str) -> list[str]:
    """The modes of framework `fw`: those its runs asked for and those they returned, so a
    column stays in place while its mode is still computing or after its mode failed."""
    seen: set[str] = set()
    for r in results:
        if r.framework != fw:
            continue
        seen.update(r.request.settings.modes)
        for t in r.tensors:
            seen.update(t.grads)
            seen.update(t.absent)
        seen.update(r.mode_errors)
    return [m for m in MODES if m in seen]


def grid_columns(
    results: Sequence[RunResult],
    view: str,
    modes: Sequence[str] | None = None,
    against: str | None = None,
) -> list[Column]:
    """The (framework, mode) columns of `view`, or (framework, mode pair) in the scatter view;
    `modes` keeps only those modes (the window's mode settings). `against`: the label of an
    earlier run whose gradients the results carry (plots/against.py): the difference view's
    columns are each mode now minus that run's."""
    cols = []
    fws: list[str] = [fw for fw in FRAMEWORKS if any(r.framework == fw for r in results)]
    fws += sorted({r.framework for r in results} - set(fws))
    for fw in fws:
        have = [m for m in _modes_of(results, fw) if modes is None or m in modes]
        if view == "scatter":
            for a, b in SCATTER_PAIRS:
                if a in have and b in have:
                    cols.append(Column(fw, f"{a}~{b}", f"{fw} · {a} vs {b}"))
        elif view == "difference":
            pairs = against_pairs(have, results, fw, against) if against else SCATTER_PAIRS
            for a, b in pairs:
                if a in have and (b in have or against):
                    cols.append(Column(fw, f"{a}{MINUS}{b}", f"{fw} · {a} {MINUS} {b}"))
        else:
            cols.extend(Column(fw, m, f"{fw} · {m}") for m in have)
    return cols


def grid_rows(results: Sequence[RunResult], comparisons=None) -> list[Row]:
    """One row per tensor of each op, in role order (inputs, params, ...), then first appearance."""
    verdicts = verdicts_from(comparisons)
    whys = explanations_from(comparisons)
    ops = list(dict.fromkeys(r.name for r in results))
    several = len(ops) > 1
    rank = {role: i for i, role in enumerate(ROLES)}
    rows = []
    for op in ops:
        found: dict[str, TensorResult] = {}
        for fw in [*FRAMEWORKS, *sorted({r.framework for r in results} - set(FRAMEWORKS))]:
            for r in results:
                if r.name == op and r.framework == fw:
                    for t in r.tensors:
                        found.setdefault(t.name, t)
        first = {n: i for i, n in enumerate(found)}
        names = sorted(found, key=lambda n: (rank.get(found[n].role, len(ROLES)), first[n]))
        for n in names:
            t = found[n]
            label = f"{t.name} · {t.role} · {shape_text(t.shape)} {t.dtype}"
            keys = [(r.framework, op, n) for r in results if r.name == op]
            v = {k[0]: verdicts[k] for k in keys if k in verdicts}
            why = {k[0]: whys[k] for k in keys if k in whys}
            rows.append(
                Row(
                    op,
                    n,
                    t.role,
                    tuple(t.shape),
                    t.dtype,
                    f"{op}: {label}" if several else label,
                    v,
                    explanations=why,
                )
            )
    return rows


def views_for(row: Row) -> list[str]:
    """The views that make sense for a row (a heatmap needs 2-D)."""
    return [v for v in VIEWS if v != "heatmap" or len(row.shape) >= 2]


def build_figure(
    results: Sequence[RunResult],
    view: str = "values",
    comparisons=None,
    title: str | None = None,
    buckets: int = S.DEFAULT_BUCKETS,
    row_views: Mapping | None = None,
    curves: Mapping | None = None,
    modes: Sequence[str] | None = None,
    log_scale: bool = False,
    against: str | None = None,
) -> Figure:
    """The grid of all tensors x (framework, mode) of `results` (one or several ops).

    `comparisons`: compare.OpComparison objects, or {(framework, op, tensor): verdict}; optional.
    `row_views`: {tensor name or (op, tensor): view} for rows drawn differently from `view`.
    `curves`: {(framework, tensor, mode): Series} values curves already decimated (reused).
    `modes`: only these modes get columns (default: those the runs asked for or returned).
    `log_scale`: values and difference panels as log10 |g| (plots/logscale.py), as the window's
    View > Log scale draws them.
    `against`: the label of an earlier run the results carry (grid_columns).
    """
    views_of: dict[Any, str] = dict(row_views or {})
    for v in [view, *views_of.values()]:
        if v not in VIEWS:
            raise ValueError(f"view {v!r}: use one of {', '.join(VIEWS)}")
    results = list(results)
    columns: dict[str, list[Column]] = {}
    rows, panels = [], []
    for row in grid_rows(results, comparisons):
        rv = views_of.get((row.op, row.tensor), views_of.get(row.tensor, view))
        row = replace(row, view=rv)
        if rv not in columns:
            columns[rv] = grid_columns(results, rv, modes, against)
        rows.append(row)
        panels.append(
            log_row(row_panels(results, row, rv, columns[rv], buckets, curves), log_scale)
        )
    ops = list(dict.fromkeys(r.name for r in results))
    views = list(dict.fromkeys(r.view for r in rows)) or [view]
    fig_view = views[0] if len(views) == 1 else "mixed"
    if title is None:
        title = figure_title(ops, views)
    legend = []
    for v in views:
        for e in legend_for(columns.get(v) or grid_columns(results, v, modes, against), v):
            if e not in legend:
                legend.append(e)
    return Figure(
        title,
        subtitle(results),
        fig_view,
        tuple(columns.get(view) or grid_columns(results, view, modes, against)),
        tuple(rows),
        tuple(panels),
        tuple(legend),
    )


def figure_title(ops: Sequence[str], views: Sequence[str]) -> str:
    what = ", ".join(v.replace("_", " ") for v in views)
    return f"{', '.join(ops) or 'no op'} — gradients ({what})"


def subtitle(results: Sequence[RunResult]) -> str:
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


def legend_for(columns: Sequence[Column], view: str) -> tuple[LegendEntry, ...]:
    if view == "difference":
        pairs = dict.fromkeys(c.mode for c in columns)
        return tuple(LegendEntry(m.replace(MINUS, f" {MINUS} "), mode_color(m)) for m in pairs)
    modes = list(dict.fromkeys(c.mode.split("~")[0] for c in columns))
    fws = list(dict.fromkeys(c.framework for c in columns))
    marker = "dot" if view in ("scatter", "vs_input") else "line"
    out = [
        LegendEntry(
            m if view != "scatter" else f"{m} (y) vs other mode (x)",
            MODE_COLORS.get(m, OTHER_COLOR),
            marker=marker,
        )
        for m in modes
    ]
    if view == "values":
        out += [
            LegendEntry(FRAMEWORK_LABEL.get(f, f), "#333333", FRAMEWORK_DASH.get(f, "solid"))
            for f in fws
        ]
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
    raise KeyError(
        f"no panel {col!r} in row {fig.rows[i].tensor}; "
        f"panels: {', '.join(p.title for p in panels)}"
    )


def select_row(fig: Figure, row) -> Figure:
    """The figure of one row: `row` is an index, a tensor name or (op, tensor)."""
    i = _row_index(fig, row)
    r = fig.rows[i]
    return replace(
        fig, title=f"{fig.title} — {r.tensor}", rows=(r,), panels=(fig.panels[i],), view=r.view
    )


def select_panel(fig: Figure, row, col) -> Figure:
    """The figure of one panel: `col` is an index in the row, (framework, mode) or a panel title."""
    i = _row_index(fig, row)
    j = _col_index(fig, i, col)
    p = fig.panels[i][j]
    mode = p.mode.split("~")[0]
    legend = tuple(
        e for e in fig.legend if e.label.split(" ")[0] in (mode, FRAMEWORK_LABEL.get(p.framework))
    )
    r = fig.rows[i]
    r = replace(r, verdicts={k: v for k, v in r.verdicts.items() if k == p.framework})
    return replace(
        fig,
        title=f"{fig.title} — {r.tensor}, {p.title}",
        rows=(r,),
        panels=((p,),),
        legend=legend,
        view=fig.rows[i].view,
    )
