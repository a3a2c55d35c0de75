"""The files `gradviz run` writes: --json, --npz, --repro and --plot (with the stack graph's
flow charts beside it). Each is written before the summary is printed, and one that cannot be
written is said, not raised: the others are still written."""

from __future__ import annotations

import os
import sys


def flow_plot_path(plot: str, op: str) -> str:
    """Where --plot puts an op's flow chart: beside the grid, `grid.flow-OP.png`."""
    stem, ext = os.path.splitext(plot)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in op)
    return f"{stem}.flow-{safe}{ext}"


def _flow_plot_jobs(results, plot: str, flows=None) -> list:
    by_op: dict[str, list] = {}
    flows = [None] * len(results) if flows is None else flows
    for r, flow in zip(results, flows):
        by_op.setdefault(r.name, []).append((r, flow))
    jobs = []
    for op, ran in by_op.items():

        def job(ran=ran, op=op):
            from gradviz.plots.flow import build_flow_figure
            from gradviz.qt.export import save_flow_figure

            rs, fl = [r for r, _ in ran], [f for _, f in ran]
            figure = build_flow_figure(rs, op, None if None in fl else fl)
            save_flow_figure(figure, flow_plot_path(plot, op))

        jobs.append((f"flow chart of {op}", flow_plot_path(plot, op), job))
    return jobs


def write_repro_scripts(folder: str, results, comparisons) -> None:
    from gradviz.repro import write_repro

    written, left = write_repro(folder, results, comparisons)
    for note in left:
        print(f"gradviz: {note}", file=sys.stderr)
    if not written:
        raise ValueError("no op could be written as a script (see above)")


def write_load_report(args, settings, load_errors) -> int:
    """The --json report of a run that had nothing to run: its settings and load_errors (a
    syntax error in the only file wrote no report at all)."""
    if not args.json:
        return 0
    from types import SimpleNamespace

    only_json = SimpleNamespace(json=args.json, npz=None, plot=None, repro=None)
    return write_outputs([], settings, only_json, [], [], [], load_errors=load_errors)


def write_outputs(
    results, settings, args, comparisons, parity_rows, diagnostics, load_errors=(), flows=None
) -> int:
    from gradviz import report

    status = 0
    jobs = []
    if args.json:
        jobs.append(
            (
                "JSON",
                args.json,
                lambda: report.write_json(
                    args.json,
                    results,
                    settings,
                    comparisons=comparisons,
                    parity_rows=parity_rows,
                    diagnostics=diagnostics,
                    load_errors=load_errors,
                    flows=flows,
                ),
            )
        )
    if args.npz:
        jobs.append(("NPZ", args.npz, lambda: report.write_npz(args.npz, results)))
    if getattr(args, "repro", None):
        jobs.append(
            (
                "reproduction scripts",
                args.repro,
                lambda: write_repro_scripts(args.repro, results, comparisons),
            )
        )
    if args.plot:

        def plot():
            from gradviz.qt.export import save_grid

            save_grid(
                results,
                args.plot,
                comparisons=comparisons,
                log_scale=getattr(args, "log_scale", False),
            )

        jobs.append(("plot", args.plot, plot))
        if settings.graph == "stack":
            jobs += _flow_plot_jobs(results, args.plot, flows)
    for what, path, job in jobs:
        try:
            job()
            print(f"wrote {what}: {path}", file=sys.stderr)
        except (OSError, ValueError) as exc:
            print(f"gradviz: could not write {what} {path}: {exc}", file=sys.stderr)
            status = 2
    return status
