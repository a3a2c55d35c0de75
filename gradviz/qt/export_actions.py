"""Export from the app: images of the grid / a row / a plot (PNG, SVG, PDF) and data (CSV of one
tensor, NPZ and JSON of the whole run). Each export asks for a path, asks before overwriting,
writes atomically (gradviz.atomic_file, for figures and reports alike), and on failure
shows a message box that says why; nothing half-written is left behind.

How the window uses it: it makes a WindowExports(parent, grid, state, flow_view) of the parts an
export reads, and
    install(exports, menu)                 fills File ▸ Export (window_menus.hook_exports calls it)
    add_plot_actions(menu, exports, tensor, framework=None, mode=None)
                                           adds "Export this plot/row/grid…, CSV…" to a plot's
                                           context menu (QMenu) built by the grid
Functions usable directly (and by tests):
    grid_image(exports, path=None, tensor=None, panel=None)        -> written path or None
                                           (the grid's own figure description, GridView.figure)
    export_csv(parent, tensor_result, path=None, name="")          -> path or None
    export_npz(parent, results, path=None)                          -> path or None
    export_json(parent, results, path=None, comparisons=None)       -> path or None
    export_repro(parent, results, folder=None, comparisons=None)    -> paths or None
`results` is a list of RunResults, or the grid's {framework: RunResult}. With `path` given no file
dialog is shown (the overwrite question still is). `op_files`: the files an export must never
overwrite besides the results' own (the window's open op files).

Dialogs go through the module-level `dialogs` object (class Dialogs): tests replace it, or pass
`dialogs=` to any function, to answer without blocking.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox

from gradviz.model import OpKey, RunResult, TensorResult
from gradviz.plots.formats import FIGURE_FORMATS, dialog_filter

IMAGE_FILTERS = ";;".join(dialog_filter(ext) for ext in FIGURE_FORMATS)
FILTERS = {
    **{ext: dialog_filter(ext) for ext in FIGURE_FORMATS},
    ".csv": "CSV table (*.csv)",
    ".npz": "NumPy arrays (*.npz)",
    ".json": "JSON report (*.json)",
}


class Dialogs:
    """The questions an export asks. Override any method (tests: a subclass with fixed answers)."""

    def save_path(self, parent, caption: str, suggested: str, filters: str) -> str | None:
        path, chosen = QFileDialog.getSaveFileName(
            parent, caption, suggested, filters, options=QFileDialog.Option.DontConfirmOverwrite
        )
        if not path:
            return None
        if not os.path.splitext(path)[1]:  # no suffix typed: the chosen filter's
            for ext, f in FILTERS.items():
                if f == chosen:
                    path += ext
        return path

    def folder_path(self, parent, caption: str, start: str) -> str | None:
        return QFileDialog.getExistingDirectory(parent, caption, start) or None

    def confirm_overwrite(self, parent, path: str) -> bool:
        answer = QMessageBox.question(
            parent,
            "Replace file?",
            f"{os.path.basename(path)} already exists in {os.path.dirname(path)}.\nReplace it?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def error(self, parent, title: str, text: str) -> None:
        QMessageBox.warning(parent, title, text)

    def done(self, parent, text: str) -> None:
        """Tell the user where the file went (status bar when the parent is a main window)."""
        if isinstance(parent, QMainWindow):
            parent.statusBar().showMessage(text, 5000)


dialogs = Dialogs()

_last_folder = ""


def _folder() -> str:
    return _last_folder or os.getcwd()


def _safe_name(text: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
    return keep.strip("_") or "gradviz"


def _as_list(results) -> list[RunResult]:
    if isinstance(results, dict):
        return [r for r in results.values() if r is not None]
    return [r for r in results if r is not None]


def _is_op_file(path: str, inputs: Sequence[str]) -> str | None:
    """The op file `path` names (one the window has open, or one of the exported results'),
    else None: an export never overwrites an input (issue 26, item 2)."""
    for f in inputs:
        try:
            if os.path.samefile(path, f):
                return f
        except OSError:
            continue
    return None


def _run_export(
    parent,
    caption: str,
    suggested: str,
    filters: str,
    path: str | None,
    write: Callable[[str], object],
    dlg: Dialogs | None,
    inputs: Sequence[str] = (),
) -> str | None:
    """Path (asked unless given) -> overwrite question -> write -> report. None if not written."""
    global _last_folder
    dlg = dlg or dialogs
    if path is None:
        path = dlg.save_path(parent, caption, os.path.join(_folder(), suggested), filters)
        if not path:
            return None
    path = os.path.abspath(path)
    op_file = _is_op_file(path, inputs)
    if op_file is not None:
        dlg.error(
            parent,
            "Export refused",
            f"{path} is the op file {op_file}; exporting there "
            "would overwrite it. Choose another name.",
        )
        return None
    if os.path.exists(path) and not dlg.confirm_overwrite(parent, path):
        return None
    try:
        write(path)
    except Exception as exc:  # noqa: BLE001 - any failure is reported, never raised into Qt
        dlg.error(parent, "Export failed", f"Could not write {path}:\n{type(exc).__name__}: {exc}")
        return None
    _last_folder = os.path.dirname(path)
    dlg.done(parent, f"saved {path}")
    return path


# --- images --------------------------------------------------------------------------------------


def export_flow(
    parent,
    results=None,
    path: str | None = None,
    pair: str | None = None,
    figure=None,
    dialogs: Dialogs | None = None,
    op_files: Sequence[str] = (),
) -> str | None:
    """The flow chart of a stack run: `figure` as the window shows it, else built from `results`."""
    from gradviz.plots.flow import build_flow_figure, is_stack
    from gradviz.qt.export import save_flow_figure

    rs = _as_list(results or [])
    if figure is None and not (rs and is_stack(rs)):
        (dialogs or globals()["dialogs"]).error(
            parent,
            "Nothing to export",
            "The flow chart belongs to a run of the stack graph: "
            "choose graph 'stack' in the settings and run an op first.",
        )
        return None
    fig = figure if figure is not None else build_flow_figure(rs, pair)
    name = pair or (rs[0].name if rs else fig.title.split(" ")[0])
    return _run_export(
        parent,
        "Export flow chart as image",
        _safe_name(f"{name}_flow") + ".png",
        IMAGE_FILTERS,
        path,
        lambda p: save_flow_figure(fig, p),
        dialogs,
        op_files,
    )


def flow_image(src: WindowExports, path=None, dialogs=None):
    """The window's flow chart, from the very description the window draws."""
    results, _, pair, _ = _grid_state(src)
    figure = src.flow_view.figure if src.flow_view is not None else None
    return export_flow(src.parent, results, path, pair, figure, dialogs, src.op_files())


# --- data ----------------------------------------------------------------------------------------


def export_csv(
    parent,
    tensor: TensorResult,
    path: str | None = None,
    name: str = "",
    dialogs: Dialogs | None = None,
    op_files: Sequence[str] = (),
) -> str | None:
    from gradviz import report

    suggested = _safe_name(f"{name}_{tensor.name}" if name else tensor.name) + ".csv"
    return _run_export(
        parent,
        f"Export {tensor.name} as CSV",
        suggested,
        FILTERS[".csv"],
        path,
        lambda p: report.write_csv(p, tensor),
        dialogs,
        op_files,
    )


def export_npz(
    parent,
    results,
    path: str | None = None,
    dialogs: Dialogs | None = None,
    op_files: Sequence[str] = (),
) -> str | None:
    from gradviz import report

    rs = _as_list(results)
    return _run_export(
        parent,
        "Export run as NPZ",
        "gradviz_run.npz",
        FILTERS[".npz"],
        path,
        lambda p: report.write_npz(p, rs),
        dialogs,
        [*(r.request.file for r in rs), *op_files],
    )


def export_json(
    parent,
    results,
    path: str | None = None,
    comparisons: Sequence | None = None,
    dialogs: Dialogs | None = None,
    diagnostics: Sequence | None = None,
    load_errors: Sequence = (),
    op_files: Sequence[str] = (),
    history=None,
) -> str | None:
    """`diagnostics`: the findings of each result, aligned with them, and `load_errors`: the
    FileCatalogs of files that did not load, as `gradviz run --json` writes them; `history`:
    each op's kept runs (report.report_dict)."""
    from gradviz import report

    rs = _as_list(results)
    settings = rs[0].request.settings if rs else {}
    return _run_export(
        parent,
        "Export run as JSON report",
        "gradviz_report.json",
        FILTERS[".json"],
        path,
        lambda p: report.write_json(
            p,
            rs,
            settings,
            comparisons,
            diagnostics=diagnostics,
            load_errors=load_errors,
            history=history,
        ),
        dialogs,
        [*(r.request.file for r in rs), *op_files],
    )


def export_repro(
    parent,
    results,
    folder: str | None = None,
    comparisons: Sequence | None = None,
    dialogs: Dialogs | None = None,
) -> list[str] | None:
    """A reproduction script per op and framework of `results` (gradviz.repro) into a folder
    (asked unless given); the files written, or None."""
    global _last_folder
    from gradviz.repro import script_name, unsupported, write_repro

    dlg = dialogs or globals()["dialogs"]
    rs = _as_list(results)
    if not rs:
        dlg.error(parent, "Nothing to export", "Run an op first.")
        return None
    if folder is None:
        folder = dlg.folder_path(parent, "Export reproduction scripts into a folder", _folder())
        if not folder:
            return None
    folder = os.path.abspath(folder)
    taken = [os.path.join(folder, script_name(r)) for r in rs if not unsupported(r)]
    taken = [p for p in taken if os.path.exists(p)]
    if taken and not dlg.confirm_overwrite(parent, taken[0]):
        return None
    try:
        written, left = write_repro(folder, rs, comparisons)
    except Exception as exc:  # noqa: BLE001 - any failure is reported, never raised into Qt
        dlg.error(
            parent, "Export failed", f"Could not write into {folder}:\n{type(exc).__name__}: {exc}"
        )
        return None
    if not written:
        dlg.error(parent, "No reproduction script", "\n".join(left))
        return None
    _last_folder = folder
    scripts = [p for p in written if p.endswith(".py")]
    dlg.done(
        parent,
        f"saved {len(scripts)} reproduction script(s) in {folder}"
        + (f"; {len(left)} op(s) left out" if left else ""),
    )
    return written


def repro_of_shown(src: WindowExports, folder=None, dialogs=None):
    """The op the grid shows, each framework's script (the whole run if the grid is empty)."""
    results = _as_list(_grid_state(src)[0]) or _run_results(src)
    return export_repro(src.parent, results, folder, _run_comparisons(src, results), dialogs)


# --- the window ----------------------------------------------------------------------------------


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
    """Everything the window holds (the whole run), else what the grid shows."""
    held = [a.result for a in src.state.results.analyses().values()]
    return held or _as_list(_grid_state(src)[0])


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


def export_whole_run_json(
    src: WindowExports, path: str | None = None, dialogs: Dialogs | None = None
) -> str | None:
    """File > Export > Whole run as JSON report: what `gradviz run --json` writes for the same
    run, its findings and its files that did not load included, and each op's last few runs
    under "history" (a key the CLI's report leaves out)."""
    rs = _run_results(src)
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
    )


def grid_image(src: WindowExports, path=None, tensor=None, panel=None, dialogs=None):
    """The grid, a row or a plot as the window draws it: the grid's own figure description."""
    grid = src.grid
    if not grid.rows:
        (dialogs or globals()["dialogs"]).error(src.parent, "Nothing to export", "Run an op first.")
        return None
    from gradviz.qt.export import save_figure

    what = "grid" if tensor is None else (f"row {tensor}" if panel is None else f"plot {tensor}")
    parts = (
        [grid.pair or "gradviz"]
        + ([tensor] if tensor else [])
        + (["_".join(map(str, panel))] if isinstance(panel, tuple) else [])
    )
    return _run_export(
        src.parent,
        f"Export {what} as image",
        _safe_name("_".join(parts)) + ".png",
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
    (dialogs or globals()["dialogs"]).error(
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
