"""The terminal report of one checked op: what `assert_gradients` raises and the pytest plugin
shows for a failed op. The CLI's own pieces (its verdict marks, error paragraphs, check line),
plus the settings the op ran with and the worst element of each failing tensor, with every mode's
value there: what a reader needs to reproduce it.
"""

from __future__ import annotations

import numpy as np

from gradviz.cli.output import check_summary
from gradviz.cli.terminal_text import err_num, error_paragraph, table, where_text
from gradviz.testing.judge import NEUTRAL, judgement, worst_verdict
from gradviz.verdict import Verdict
from gradviz.vocab import CheckStatus, Mode

PASSING_HERE = ("match",) + NEUTRAL  # tensors not worth a line of their own


def op_report(analysis, expect: tuple[str, ...] = ()) -> str:
    lines: list[str] = []
    r, comp = analysis.result, analysis.comparison
    passed, why = judgement(analysis, expect)
    where = f" at {where_text(r.op.where)}" if r.op is not None else ""
    lines.append(
        f"gradviz: {r.name} ({r.framework}){where}: " + (worst_verdict(analysis) if passed else why)
    )
    s = r.request.settings
    lines.append(
        f"  graph {s.graph}, shape {'x'.join(map(str, s.shape))}, {s.dtype}, seed "
        f"{s.seed}, upstream {s.upstream}, device {r.device or s.device}"
        + (", inputs given by the test" if r.request.given is not None else "")
    )
    if r.status != "ok":
        lines += ["", error_paragraph(f"{r.name} ({r.framework}) failed", r.error)]
        return "\n".join(lines)
    lines.append("")
    rows = [
        (
            t.name,
            "x".join(str(n) for n in t.shape) or "scalar",
            Verdict(t.verdict).label,
            err_num(t.metrics, "custom~default"),
            err_num(t.metrics, "custom~numeric"),
        )
        for t in comp.tensors
    ]
    lines += _table_lines(
        ["tensor", "shape", "verdict", "|custom-default|", "|custom-numeric|"], rows
    )
    for mode, err in r.mode_errors.items():
        lines += ["", error_paragraph(f"the {mode} mode raised", err)]
    for t in comp.tensors:
        if t.verdict in PASSING_HERE:
            continue
        lines.append(f"  {t.name}: {t.verdict}: {t.explanation}")
        worst = worst_element(r.tensor(t.name), t)
        if worst:
            lines.append(f"    {worst}")
    if r.checks:
        lines.append(f"  contract checks: {check_summary(r.checks)}")
        for c in r.checks:
            if c.status == CheckStatus.FAIL:
                lines.append(f"    {c.name}: {c.message}")
    if analysis.findings:
        lines.append("  findings:")
        for f in analysis.findings:
            at = f" at {where_text(f.where)}" if f.where else ""
            lines.append(f"    [{f.severity}] {f.code}{at}: {f.message}")
            if f.fix:
                lines.append(f"        fix: {f.fix}")
    return "\n".join(lines)


def repro_note(analysis, folder) -> str:
    """The report's last line where `folder` is given: the reproduction script written there
    (gradviz.repro), or why none could be."""
    if not folder:
        return ""
    from gradviz.repro import write_repro

    written, left = write_repro(str(folder), [analysis.result], [analysis.comparison])
    scripts = [p for p in written if p.endswith(".py")]
    if scripts:
        return (
            f"\n  reproduction script (needs only {analysis.result.framework} and numpy): "
            f"python {scripts[0]}"
        )
    return "\n  " + "".join(left)


def worst_element(tensor, comparison) -> str:
    """'worst element x[3]: custom 1.5, default 3, numeric 3' where custom is furthest from its
    reference (numeric where it was taken element by element, else default); for NaN/Inf the
    first such element. "" where no element stands out (a projection, an absent gradient)."""
    if tensor is None or Mode.CUSTOM not in tensor.grads:
        return ""
    custom = np.asarray(tensor.grads[Mode.CUSTOM]).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(custom))
    index, what = None, "worst element"
    if comparison.verdict == "non-finite" and bad.size:
        index, what = int(bad[0]), f"first of {bad.size} non-finite elements"
    else:
        for key, mode in (("custom~numeric", Mode.NUMERIC), ("custom~default", Mode.DEFAULT)):
            m = comparison.metrics.get(key)
            if (
                m is not None
                and m.worst_index is not None
                and tensor.grads.get(mode) is not None
                and np.asarray(tensor.grads[mode]).size == custom.size
            ):
                index = int(m.worst_index)
                break
    if index is None or index >= custom.size:
        return ""
    at = np.unravel_index(index, tensor.shape) if tensor.shape else ()
    values = ", ".join(
        f"{mode} {float(np.asarray(tensor.grads[mode]).reshape(-1)[index]):.6g}"
        for mode in (Mode.CUSTOM, Mode.DEFAULT, Mode.NUMERIC)
        if tensor.grads.get(mode) is not None and np.asarray(tensor.grads[mode]).size == custom.size
    )
    return f"{what} {tensor.name}[{', '.join(str(int(i)) for i in at)}]: {values}"


def _table_lines(header, rows) -> list[str]:
    import io

    buf = io.StringIO()
    table(header, rows, buf)
    return ["  " + line for line in buf.getvalue().splitlines()]
