"""What the command line prints and writes: summary table, failures, parity, report files."""

from __future__ import annotations

import sys

from gradviz.cli.flow_table import print_flow
from gradviz.cli.report_files import write_outputs
from gradviz.cli.terminal_text import (
    err_num,
    error_paragraph,
    rel_path,
    rel_where,
    table,
    where_text,
)
from gradviz.verdict import Verdict
from gradviz.vocab import Framework


def print_load_errors(catalogs, out=None) -> bool:
    out = out or sys.stderr  # the stream of now (tests swap it)
    failed = False
    for cat in catalogs:
        if cat.error is not None:
            failed = True
            fw = f" ({cat.framework})" if cat.framework else ""
            print(error_paragraph(f"cannot load {rel_path(cat.file)}{fw}", cat.error), file=out)
            from gradviz.diagnostics import diagnose_load

            for f in diagnose_load(cat.error, cat.file, cat.framework):
                print(f"  [{f.severity}] {f.code}: {f.message}\n      fix: {f.fix}", file=out)
            print(file=out)
    return failed


def print_op_list(catalogs, out=sys.stdout) -> None:
    rows = [
        (op.name, op.framework, op.kind, rel_where(op.where)) for cat in catalogs for op in cat.ops
    ]
    table(["op", "framework", "kind", "where"], rows, out)
    print_skipped(catalogs, out)
    print_load_notes(catalogs, out)


def print_skipped(catalogs, out=sys.stdout) -> None:
    """What loading left out of each file and why (the same in `list` and `run`)."""
    notes = list(
        dict.fromkeys(
            f"{rel_path(cat.file)}: skipped {why}" for cat in catalogs for why in cat.skipped
        )
    )
    for note in notes:
        print(note, file=out)


def print_load_notes(catalogs, out=None) -> None:
    """How a file was loaded when not as asked (a package file loaded as a plain file), once per
    file whichever frameworks loaded it. `out`: the stderr of now by default."""
    out = out or sys.stderr
    for note in dict.fromkeys(f"{rel_path(cat.file)}: {n}" for cat in catalogs for n in cat.notes):
        print(f"gradviz: note: {note}", file=out)


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


def print_results(
    results,
    comparisons,
    settings,
    args,
    out=None,
    load_errors=(),
    *,
    diagnostics,
    flows=None,
    parity_rows=None,
) -> int:
    """Write the requested files, then print the summary (a terminal that cannot show a name
    must not cost the user the report). `load_errors`: catalogs of files that did not load,
    recorded in the JSON report; `diagnostics` and `flows`: the findings and the flow rows of
    each result, `parity_rows` the run's (app.analysis, app.parity_rows; None: worked out here).
    Returns 2 when a file could not be written, else 0."""
    out = out or sys.stdout  # the stream of now (tests swap it)
    from gradviz.compare import parity, summary_counts

    if parity_rows is None:
        parity_rows = parity(results)
    status = write_outputs(
        results, settings, args, comparisons, parity_rows, diagnostics, load_errors, flows
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
                    err_num(t.metrics, "custom~default"),
                    err_num(t.metrics, "custom~numeric"),
                )
            )
    table(
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
        print_flow(results, out, flows)
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
        at = f" at {where_text(f.where)}" if f.where else ""
        print(f"  [{f.severity}] {f.code} {f.op} ({f.framework}){at}: {f.message}", file=out)
        if f.fix:
            print(f"      fix: {f.fix}", file=out)


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
