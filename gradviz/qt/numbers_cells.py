"""What the Numbers tables hold: their columns (header, source, key), a cell's raw value from a
TensorComparison, and the 4-significant-digit text a cell shows."""

from __future__ import annotations

from gradviz.compare.verdicts import shown_verdict
from gradviz.model import MODES

STAT_KEYS = ("min", "max", "mean")
PAIRS = ("custom~default", "custom~numeric", "default~numeric")


def fmt(x) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def columns(modes=MODES, with_op: bool = False) -> list[tuple[str, str, str]]:
    """(header, source, key): source is 'row', a mode (stats) or a pair (metrics); `with_op`:
    the op's name first (the run's worst tensors, every op in one table)."""
    cols = [("op", "row", "op")] if with_op else []
    cols += [
        ("tensor", "row", "name"),
        ("fw", "row", "framework"),
        ("verdict", "row", "verdict"),
        ("shape", "row", "shape"),
    ]
    # how far apart the modes are comes first (what a verdict rests on), each mode's own
    # numbers after it: at ~27 columns, the comparisons sat off-screen to the right
    for p in PAIRS:
        a, b = p.split("~")
        if a in modes and b in modes:
            cols += [
                (f"{p} max abs err", p, "max_abs_err"),
                (f"{p} max rel err", p, "max_rel_err"),
                (f"{p} differ", p, "n_differ"),
            ]
    cols.append(("tolerance", "row", "tolerance"))
    for m in modes:
        cols += [(f"{m} {k}", m, k) for k in STAT_KEYS]
        cols.append((f"{m} NaN/Inf", m, "nonfinite"))
    cols.append(("explanation", "row", "explanation"))
    return cols


def cell_value(fw: str, tc, src: str, key: str):
    """The raw value of a Numbers cell: a row field, a mode's stat or a pair's metric."""
    if src == "row":
        if key == "name":
            return tc.name
        if key == "framework":
            return fw
        if key == "shape":
            return "×".join(map(str, tc.shape)) or "scalar"
        if key == "tolerance":
            return str(tc.tolerance)
        if key == "verdict":
            return shown_verdict(tc)
        return getattr(tc, key, "")
    if src in MODES:
        st = tc.stats.get(src)
        if st is None:
            return None  # the mode gave nothing here (not run, an int input): not "0 NaN"
        if st.method == "projection":  # a reference, only not per element
            return f"{st.directions or 0} directions" if key == "min" else None
        if st.absent:  # a mode that raised is an error; absent: it gave no gradient
            said = "cancelled" if st.cancelled else "error" if st.raised else "absent"
            return said if key == "min" else None
        if key == "nonfinite":
            return f"{st.nan}/{st.inf}" if (st.nan or st.inf) else "0"
        return getattr(st, key)  # the column's key names a ModeStats field
    m = tc.metrics.get(src)
    return getattr(m, key) if m is not None else None
