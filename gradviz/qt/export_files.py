"""The exports of the app that take results, not the window: the flow chart of a stack run as
an image, one tensor as CSV, a run as NPZ or as the JSON report `gradviz run --json` writes, and
reproduction scripts (gradviz.repro). Each goes through export_dialogs (path, overwrite
question, atomic write, the reason on failure); `results` is a list of RunResults or the grid's
{framework: RunResult}; with `path` given no file dialog is shown (the overwrite question still
is); `op_files`: the files an export must never overwrite besides the results' own."""

from __future__ import annotations

import os
from collections.abc import Sequence

from gradviz.model import TensorResult
from gradviz.qt import export_dialogs as ED
from gradviz.qt.export_dialogs import FILTERS, IMAGE_FILTERS, Dialogs, as_list, safe_name

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

    rs = as_list(results or [])
    if figure is None and not (rs and is_stack(rs)):
        ED.asked(dialogs).error(
            parent,
            "Nothing to export",
            "The flow chart belongs to a run of the stack graph: "
            "choose graph 'stack' in the settings and run an op first.",
        )
        return None
    fig = figure if figure is not None else build_flow_figure(rs, pair)
    name = pair or (rs[0].name if rs else fig.title.split(" ")[0])
    return ED.run_export(
        parent,
        "Export flow chart as image",
        safe_name(f"{name}_flow") + ".png",
        IMAGE_FILTERS,
        path,
        lambda p: save_flow_figure(fig, p),
        dialogs,
        op_files,
    )


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

    suggested = safe_name(f"{name}_{tensor.name}" if name else tensor.name) + ".csv"
    return ED.run_export(
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

    rs = as_list(results)
    return ED.run_export(
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
    flows: Sequence | None = None,
    parity_rows: Sequence | None = None,
) -> str | None:
    """`diagnostics` and `flows`: the findings and flow rows of each result, aligned with them,
    `parity_rows` the run's (None: made from `results`), and `load_errors`: the FileCatalogs
    of files that did not load, as `gradviz run --json` writes them; `history`: each op's kept
    runs (report.report_dict)."""
    from gradviz import report

    rs = as_list(results)
    settings = rs[0].request.settings if rs else {}
    return ED.run_export(
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
            flows=flows,
            parity_rows=parity_rows,
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
    from gradviz.repro import script_name, unsupported, write_repro

    dlg = ED.asked(dialogs)
    rs = as_list(results)
    if not rs:
        dlg.error(parent, "Nothing to export", "Run an op first.")
        return None
    if folder is None:
        folder = dlg.folder_path(parent, "Export reproduction scripts into a folder", ED.folder())
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
    ED.remember_folder(folder)
    scripts = [p for p in written if p.endswith(".py")]
    dlg.done(
        parent,
        f"saved {len(scripts)} reproduction script(s) in {folder}"
        + (f"; {len(left)} op(s) left out" if left else ""),
    )
    return written
