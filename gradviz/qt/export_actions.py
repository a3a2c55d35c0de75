"""The window's exports: File ▸ Export and a plot's context menu, over the parts of the window
an export reads (images of the grid / a row / a plot, the flow chart, CSV of one tensor, NPZ and
JSON of the whole run, reproduction scripts). The writing is export_files' (results in, a file
out) and the asking export_dialogs' (path, overwrite question, the reason on failure).

How the window uses it: it makes a WindowExports(parent, grid, state, flow_view) of the parts an
export reads, and
    install(exports, menu)                 fills File ▸ Export (window_menus.hook_exports calls it)
    add_plot_actions(menu, exports, tensor, framework=None, mode=None)
                                           adds "Export this plot/row/grid…, CSV…" to a plot's
                                           context menu (QMenu) built by the grid
Functions usable directly (and by tests):
    grid_image(exports, path=None, tensor=None, panel=None)        -> written path or None
                                           (the grid's own figure description, GridView.figure)
    flow_image(exports, path=None), tensor_csv(exports, tensor=None, framework=None, path=None),
    export_whole_run_json(exports, path=None), repro_of_shown(exports, folder=None)
and export_files' export_csv / export_npz / export_json / export_repro / export_flow.
Each takes `dialogs=` (export_dialogs.Dialogs) to answer without blocking.
"""

from __future__ import annotations

from gradviz.model import FRAMEWORKS, OpKey, RunResult
from gradviz.qt import export_dialogs as ED
from gradviz.qt.export_dialogs import IMAGE_FILTERS, Dialogs, as_list, safe_name
from gradviz.qt.export_files import export_csv, export_flow, export_json, export_npz, export_repro

# --- the window's parts --------------------------------------------------------------------------


class WindowExports:
    """What the window's exports read, handed over by the window: `parent` (of the dialogs; its
    status bar says where a file went), the `grid` (the pair shown: its rows, results and
    comparisons), the run's `state` (gradviz.app.state.AppState: every result, the open op files,
    the files that did not load) and the `flow_view` (the flow chart as drawn), if any."""

    def __init__(self, parent, grid, state, flow_view=None) -> None:
        self.parent, self.grid, self.state, self.flow_view = parent, grid, state, flow_view

    def op_files(self) -> list[str]:
        return list(self.state.loaded.files)


def _grid_state(src: WindowExports):
    """(results {fw: RunResult}, comparisons {fw: OpComparison}, pair, row views) shown now."""
    grid = src.grid
    views = {name: row.view() for name, row in grid.rows.items()}
    return dict(grid.results), dict(grid.comparisons or {}), grid.pair or None, views


def _current_tensor(src: WindowExports) -> str | None:
    rows = src.grid.rows
    for name, row in rows.items():
        if row.highlighted:
            return name
    return next(iter(rows), None)


def _run_results(src: WindowExports) -> list[RunResult]:
    """Everything the window holds (the whole run), else what the grid shows; in the order
    `gradviz run` lists the same ops (pair by pair, each in torch, tf, jax order), not the
    order their results happened to arrive in."""
    held = src.state.results.analyses()
    rank = {fw: i for i, fw in enumerate(FRAMEWORKS)}
    order = {
        OpKey.of_op(op): n
        for n, (fw, op) in enumerate(
            (fw, op)
            for impls in src.state.loaded.pairs().values()
            for fw, op in sorted(impls.items(), key=lambda item: rank.get(item[0], len(rank)))
        )
    }
    keys = sorted(held, key=lambda k: order.get(k, len(order)))  # stable: the rest as held
    return [held[k].result for k in keys] or as_list(_grid_state(src)[0])


def _run_comparisons(src: WindowExports, results: list[RunResult]):
    analyses = _run_analyses(src, results)
    if analyses is None or any(a.comparison is None for a in analyses):
        return None  # report.py computes them all
    return [a.comparison for a in analyses]


def _run_analyses(src: WindowExports, results: list[RunResult]):
    """The window's analysis of each result (its verdicts and findings), or None."""
    out = []
    for r in results:
        key = OpKey.of_request(r.request)
        held = src.state.results.get(key)
        if held is None:
            return None
        out.append(held)
    return out


def _run_diagnostics(src: WindowExports, results: list[RunResult]):
    """The findings of each result, as the window shows them (None: report.py lists none)."""
    analyses = _run_analyses(src, results)
    if analyses is None:
        from gradviz.diagnostics import diagnose

        return [diagnose(r) for r in results]
    return [list(a.findings) for a in analyses]


def _load_errors(src: WindowExports) -> list:
    """A FileCatalog per file the window could not load, as the report lists them."""
    from gradviz.model import FileCatalog

    return [FileCatalog(file, "", error=err) for file, err in src.state.loaded.errors.items()]


def flow_image(src: WindowExports, path=None, dialogs=None):
    """The window's flow chart, from the very description the window draws."""
    results, _, pair, _ = _grid_state(src)
    figure = src.flow_view.figure if src.flow_view is not None else None
    return export_flow(src.parent, results, path, pair, figure, dialogs, src.op_files())


def repro_of_shown(src: WindowExports, folder=None, dialogs=None):
    """The op the grid shows, each framework's script (the whole run if the grid is empty)."""
    results = as_list(_grid_state(src)[0]) or _run_results(src)
    return export_repro(src.parent, results, folder, _run_comparisons(src, results), dialogs)


def export_whole_run_json(
    src: WindowExports, path: str | None = None, dialogs: Dialogs | None = None
) -> str | None:
    """File > Export > Whole run as JSON report: what `gradviz run --json` writes for the same
    run, its findings and its files that did not load included, and each op's last few runs
    under "history" (a key the CLI's report leaves out)."""
    rs = _run_results(src)
    analyses = _run_analyses(src, rs)
    return export_json(
        src.parent,
        rs,
        path,
        comparisons=_run_comparisons(src, rs),
        dialogs=dialogs,
        diagnostics=_run_diagnostics(src, rs),
        load_errors=_load_errors(src),
        op_files=src.op_files(),
        history=src.state.history.as_dicts(),
        flows=None if analyses is None else [a.flow for a in analyses],
        parity_rows=_run_parity(analyses),
    )


def _run_parity(analyses):
    """The run's parity rows as the analyses hold them (the run task made them), each once;
    None (report.py makes them) when an op of the run has none yet."""
    if analyses is None or any(a.parity is None for a in analyses):
        return None
    from gradviz.app.parity_rows import parity_in_order

    return parity_in_order(analyses)


def grid_image(src: WindowExports, path=None, tensor=None, panel=None, dialogs=None):
    """The grid, a row or a plot as the window draws it: the grid's own figure description."""
    grid = src.grid
    if not grid.rows:
        ED.asked(dialogs).error(src.parent, "Nothing to export", "Run an op first.")
        return None
    from gradviz.qt.export import save_figure

    what = "grid" if tensor is None else (f"row {tensor}" if panel is None else f"plot {tensor}")
    parts = (
        [grid.pair or "gradviz"]
        + ([tensor] if tensor else [])
        + (["_".join(map(str, panel))] if isinstance(panel, tuple) else [])
    )
    return ED.run_export(
        src.parent,
        f"Export {what} as image",
        safe_name("_".join(parts)) + ".png",
        IMAGE_FILTERS,
        path,
        lambda p: save_figure(grid.figure(tensor, panel), p),
        dialogs,
        src.op_files(),
    )


def tensor_csv(
    src: WindowExports,
    tensor: str | None = None,
    framework: str | None = None,
    path=None,
    dialogs=None,
):
    results, _, pair, _ = _grid_state(src)
    tensor = tensor or _current_tensor(src)
    fws = [framework] if framework else list(results)
    for fw in fws:
        r = results.get(fw)
        t = r.tensor(tensor) if r is not None and tensor else None
        if t is not None:
            return export_csv(
                src.parent,
                t,
                path,
                name=f"{pair or r.name}_{fw}",
                dialogs=dialogs,
                op_files=src.op_files(),
            )
    ED.asked(dialogs).error(
        src.parent, "Nothing to export", "Select a tensor of an op that has run."
    )
    return None


def install(src: WindowExports, menu) -> None:
    """Fill the window's File ▸ Export menu."""
    menu.addAction("Grid as image (PNG, SVG, PDF)…", lambda: grid_image(src))
    menu.addAction("Selected row as image…", lambda: grid_image(src, tensor=_current_tensor(src)))
    menu.addAction("Flow chart (stack graph) as image…", lambda: flow_image(src))
    menu.addSeparator()
    menu.addAction("Selected tensor as CSV…", lambda: tensor_csv(src))
    menu.addAction(
        "Whole run as NPZ…",
        lambda: export_npz(src.parent, _run_results(src), op_files=src.op_files()),
    )
    menu.addAction("Whole run as JSON report…", lambda: export_whole_run_json(src))
    menu.addAction("Reproduction script (this op)…", lambda: repro_of_shown(src))


def add_plot_actions(
    menu, src: WindowExports, tensor: str, framework: str | None = None, mode: str | None = None
) -> None:
    """Add export entries to a plot's context menu; `mode` is the panel's ("custom~default" in the
    scatter view)."""
    if framework and mode:
        panel = (framework, mode)
        menu.addAction("Export this plot…", lambda: grid_image(src, tensor=tensor, panel=panel))
    menu.addAction(f"Export row {tensor}…", lambda: grid_image(src, tensor=tensor))
    menu.addAction("Export grid…", lambda: grid_image(src))
    menu.addAction(f"Export {tensor} as CSV…", lambda: tensor_csv(src, tensor, framework))
