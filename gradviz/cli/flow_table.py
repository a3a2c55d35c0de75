"""The stack graph's gradient flow as a terminal table: the norm at each layer's input per mode,
both ends of a deep stack and every layer where a gradient dies."""

from __future__ import annotations

import sys

from gradviz.cli.terminal_text import table

FLOW_ROWS_MAX = 12  # deeper stacks show both ends and every layer where a gradient dies


def _norm_text(n) -> str:
    return "-" if n is None else f"{n:.3g}"


def print_flow(results, out=None, flows=None) -> None:
    """Per op and framework: the L2 norm of the gradient at each layer's input h{i} per mode.
    `flows`: each result's flow rows (its analysis's), aligned with `results`; None: made here."""
    out = out or sys.stdout  # the stream of now (tests swap it)
    from gradviz.flow import dies_at, flow_of, modes_of

    rows, notes, modes = [], [], []
    flows = [flow_of(r) for r in results] if flows is None else flows
    for r, flow in zip(results, flows):
        flow = list(flow) if r.status == "ok" else []
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
    table(["op", "fw", "layer", *modes], rows, out)
    for n in notes:
        print("  " + n, file=out)
    print(file=out)
