"""What the command line prints and writes: summary table, failures, parity, report files."""

from __future__ import annotations

import os
import sys
import textwrap

from gradviz.verdict import Verdict
from gradviz.vocab import Framework


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def _where(where: str) -> str:
    if not where:
        return ""
    path, _, line = where.rpartition(":")
    return f"{_rel(path)}:{line}" if path else where


def error_paragraph(title: str, err) -> str:
    """One paragraph: what failed, where in the user's file, and the user's own frames."""
    at = f" at {_where(err.where)}" if err.where else ""
    lines = [f"{title}{at}", f"  {err.type}: " + err.message.replace("\n", "\n  ")]
    if err.traceback.strip():
        lines.append("  your code, innermost last:")
        lines.append(textwrap.indent(err.traceback.rstrip(), "  "))
    return "\n".join(lines)


def print_load_errors(catalogs, out=None) -> bool:
    out = out or sys.stderr  # the stream of now (tests swap it)
    failed = False
    for cat in catalogs:
        if cat.error is not None:
            failed = True
            fw = f" ({cat.framework})" if cat.framework else ""
            print(error_paragraph(f"cannot load {_rel(cat.file)}{fw}", cat.error), file=out)
            from gradviz.diagnostics import diagnose_load

            for f in diagnose_load(cat.error, cat.file, cat.framework):
                print(f"  [{f.severity}] {f.code}: {f.message}\n      fix: {f.fix}", file=out)
            print(file=out)
    return failed


def print_op_list(catalogs, out=sys.stdout) -> None:
    rows = [
        (op.name, op.framework, op.kind, _rel_where(op.where)) for cat in catalogs for op in cat.ops
    ]
    _table(["op", "framework", "kind", "where"], rows, out)
    print_skipped(catalogs, out)
    print_load_notes(catalogs, out)


def print_skipped(catalogs, out=sys.stdout) -> None:
    """What loading left out of each file and why (the same in `list` and `run`)."""
    notes = list(
        dict.fromkeys(f"{_rel(cat.file)}: skipped {why}" for cat in catalogs for why in cat.skipped)
    )
    for note in notes:
        print(note, file=out)


def print_load_notes(catalogs, out=None) -> None:
    """How a file was loaded when not as asked (a package file loaded as a plain file), once per
    file whichever frameworks loaded it. `out`: the stderr of now by default."""
    out = out or sys.stderr
    for note in dict.fromkeys(f"{_rel(cat.file)}: {n}" for cat in catalogs for n in cat.notes):
        print(f"gradviz: note: {note}", file=out)


def _rel_where(where: str) -> str:
    path, _, line = where.rpartition(":")
    return f"{_rel(path)}:{line}"


def print_devices(devices: dict, out=sys.stdout, missing=()) -> None:
    """`missing`: optional frameworks (vocab.Framework) that are not installed, with how to."""
    for fw, info in devices.items():
        print(f"{fw}:", file=out)
        if info["error"]:
            print(f"  unavailable: {info['error']}", file=out)
        for d in info["devices"]:
            state = "available" if d["available"] else f"absent: {d['reason']}"
            print(f"  {d['name']:8} {d.get('label', ''):24} {state}", file=out)
    for fw in missing:
        print(
            f"{fw}:\n  not installed: add {fw.label} with pip install 'gradviz[{fw.extra}]'",
            file=out,
        )


def _table(header, rows, out) -> None:
    widths = (
        [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        if rows
        else [len(h) for h in header]
    )
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    print(fmt.format(*header).rstrip(), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print(fmt.format(*[str(x) for x in r]).rstrip(), file=out)


def _err_num(metrics: dict, key: str) -> str:
    from gradviz.compare.numbers import max_abs_text

    return max_abs_text(metrics.get(key))


def print_results(
    results, comparisons, settings, args, out=None, load_errors=(), *, diagnostics
) -> int:
    """Write the requested files, then print the summary (a terminal that cannot show a name
    must not cost the user the report). `load_errors`: catalogs of files that did not load,
    recorded in the JSON report; `diagnostics`: the findings of each result (app.analysis).
    Returns 2 when a file could not be written, else 0."""
    out = out or sys.stdout  # the stream of now (tests swap it)
    from gradviz.compare import parity, summary_counts

    parity_rows = parity(results)
    status = _write_outputs(
        results, settings, args, comparisons, parity_rows, diagnostics, load_errors
    )
    rows = []
    for r, c in zip(results, comparisons):
        if r.status != "ok":
            rows.append((r.name, r.framework, r.device or "-", "-", "-", "ERROR", "-", "-"))
            continue
        for t in c.tensors:
            shape = "x".join(str(s) for s in t.shape) or "scalar"
            rows.append(
                (
                    r.name,
                    r.framework,
                    r.device,
                    t.name,
                    shape,
                    Verdict(t.verdict).label,
                    _err_num(t.metrics, "custom~default"),
                    _err_num(t.metrics, "custom~numeric"),
                )
            )
    _table(
        [
            "op",
            "fw",
            "device",
            "tensor",
            "shape",
            "verdict",
            "|custom-default|",
            "|custom-numeric|",
        ],
        rows,
        out,
    )
    print(file=out)
    if settings.graph == "stack":
        print_flow(results, out)
    for r, c in zip(results, comparisons):
        if r.status != "ok":
            print(error_paragraph(f"{r.name} ({r.framework}) failed", r.error), file=out)
            print(file=out)
            continue
        for mode, err in r.mode_errors.items():
            print(
                error_paragraph(f"{r.name} ({r.framework}): the {mode} mode raised", err), file=out
            )
            print(file=out)
        for t in c.tensors:
            if t.verdict not in ("match",):
                print(f"{r.name} ({r.framework}) {t.name}: {t.verdict}: {t.explanation}", file=out)
    _print_checks(results, out)
    _print_diagnostics(diagnostics, out)
    for fws in dict.fromkeys(tuple(p.frameworks) for p in parity_rows):
        rows = [p for p in parity_rows if tuple(p.frameworks) == fws]
        bad = [p for p in rows if p.verdict != "match"]
        print(
            f"\nparity {fws[0]} vs {fws[1]}: {len(rows) - len(bad)} of {len(rows)} rows match",
            file=out,
        )
        for p in bad:
            err = "-" if p.max_abs_err is None else f"{p.max_abs_err:.3g}"
            print(
                f"  {p.op} {p.tensor} {p.mode}: {p.verdict} (max abs error {err}) {p.note}",
                file=out,
            )
    counts = summary_counts(comparisons)
    print("\nverdicts: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v), file=out)
    return status


FLOW_ROWS_MAX = 12  # deeper stacks show both ends and every layer where a gradient dies


def _norm_text(n) -> str:
    return "-" if n is None else f"{n:.3g}"


def print_flow(results, out=None) -> None:
    """Per op and framework: the L2 norm of the gradient at each layer's input h{i} per mode."""
    out = out or sys.stdout  # the stream of now (tests swap it)
    from gradviz.flow import dies_at, flow_of, modes_of

    rows, notes, modes = [], [], []
    for r in results:
        flow = flow_of(r) if r.status == "ok" else []
        if not flow:
            continue
        ms = modes_of(r)
        modes += [m for m in ms if m not in modes]
        dead = {m: dies_at(flow, m) for m in ms}
        keep = {row.layer for row in flow[:3] + flow[-3:]} | {d for d in dead.values() if d}
        if len(flow) <= FLOW_ROWS_MAX:
            keep = {row.layer for row in flow}
        skipped = False
        for row in flow:
            if row.layer not in keep:
                if not skipped:
                    rows.append((r.name, r.framework, "…", *["" for _ in modes]))
                skipped = True
                continue
            skipped = False
            rows.append(
                (r.name, r.framework, row.layer, *[_norm_text(row.norm.get(m)) for m in modes])
            )
        for d in sorted({d for d in dead.values() if d}):
            which = " and ".join(m for m, at in dead.items() if at == d)
            notes.append(
                f"{r.name} ({r.framework}): the {which} gradient dies at layer {d} "
                "(zero or absent there: nothing reaches the layers below)"
            )
    if not rows:
        return
    print(
        "gradient flow: L2 norm of the gradient at h{i}, layer 1 on the input side "
        "(- absent; every layer in --json)",
        file=out,
    )
    rows = [r + ("",) * (3 + len(modes) - len(r)) for r in rows]
    _table(["op", "fw", "layer", *modes], rows, out)
    for n in notes:
        print("  " + n, file=out)
    print(file=out)


def flow_plot_path(plot: str, op: str) -> str:
    """Where --plot puts an op's flow chart: beside the grid, `grid.flow-OP.png`."""
    stem, ext = os.path.splitext(plot)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in op)
    return f"{stem}.flow-{safe}{ext}"


def _flow_plot_jobs(results, plot: str) -> list:
    by_op: dict[str, list] = {}
    for r in results:
        by_op.setdefault(r.name, []).append(r)
    jobs = []
    for op, rs in by_op.items():

        def job(rs=rs, op=op):
            from gradviz.plots.flow import build_flow_figure
            from gradviz.qt.export import save_flow_figure

            save_flow_figure(build_flow_figure(rs, op), flow_plot_path(plot, op))

        jobs.append((f"flow chart of {op}", flow_plot_path(plot, op), job))
    return jobs


def check_summary(checks) -> str:
    """One line per op: 'double_backward pass, vmap FAIL, compiled skip' (failures in capitals,
    their message and fix follow in the diagnostics)."""
    return ", ".join(f"{c.name} {'FAIL' if c.status == 'fail' else c.status}" for c in checks)


def _print_checks(results, out) -> None:
    ran = [r for r in results if r.checks]
    if not ran:
        return
    print("\ncontract checks:", file=out)
    for r in ran:
        print(f"  {r.name} ({r.framework}): {check_summary(r.checks)}", file=out)


def _print_diagnostics(diagnostics, out) -> None:
    findings = [f for per_op in diagnostics for f in per_op]
    if not findings:
        return
    print("\ndiagnostics:", file=out)
    for f in findings:
        at = f" at {_where(f.where)}" if f.where else ""
        print(f"  [{f.severity}] {f.code} {f.op} ({f.framework}){at}: {f.message}", file=out)
        if f.fix:
            print(f"      fix: {f.fix}", file=out)


def _write_repro(folder: str, results, comparisons) -> None:
    from gradviz.repro import write_repro

    written, left = write_repro(folder, results, comparisons)
    for note in left:
        print(f"gradviz: {note}", file=sys.stderr)
    if not written:
        raise ValueError("no op could be written as a script (see above)")


FRAMEWORK_NAMES = {fw: fw.package for fw in Framework}


def print_left_out(files, catalogs, frameworks, out) -> None:
    """Say why a file gave no ops at all: it imports only a framework --framework left out
    (a TF-only file with --framework torch read just 'no ops found')."""
    from gradviz.import_scan import frameworks_used

    seen = {c.file for c in catalogs}
    for f in files:
        if f in seen:
            continue
        used, _err = frameworks_used(f)
        if used and not set(used) & set(frameworks):
            names = " and ".join(FRAMEWORK_NAMES.get(u, u) for u in used)
            print(
                f"gradviz: {f} imports {names}, which --framework {'/'.join(frameworks)} "
                f"leaves out: give --framework {used[0] if len(used) == 1 else 'all'}",
                file=out,
            )


def write_load_report(args, settings, load_errors) -> int:
    """The --json report of a run that had nothing to run: its settings and load_errors (a
    syntax error in the only file wrote no report at all)."""
    if not args.json:
        return 0
    from types import SimpleNamespace

    only_json = SimpleNamespace(json=args.json, npz=None, plot=None, repro=None)
    return _write_outputs([], settings, only_json, [], [], [], load_errors=load_errors)


def _write_outputs(
    results, settings, args, comparisons, parity_rows, diagnostics, load_errors=()
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
                lambda: _write_repro(args.repro, results, comparisons),
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
            jobs += _flow_plot_jobs(results, args.plot)
    for what, path, job in jobs:
        try:
            job()
            print(f"wrote {what}: {path}", file=sys.stderr)
        except (OSError, ValueError) as exc:
            print(f"gradviz: could not write {what} {path}: {exc}", file=sys.stderr)
            status = 2
    return status
