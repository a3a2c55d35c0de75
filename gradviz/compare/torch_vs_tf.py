"""torch vs tf: the same op's tensors compared across frameworks, per mode (numpy only).

A TF `None` gradient and torch zeros are different data (DESIGN.md: absent is not zero): a row
where one framework has a gradient and the other none is `differs`, whatever the values. Such a
row has no error number (None, shown "—"): measured against zeros it read 0 for TF None vs torch
zeros, a number that said "equal" next to a `differs`. The note says what each framework gave.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np

from gradviz.compare.metrics import pair_metrics, tolerances
from gradviz.model import MODES, RunResult, TensorResult
from gradviz.vocab import Framework, Mode


@dataclass(frozen=True)
class ParityRow:
    op: str
    tensor: str
    mode: str                   # a gradient mode, or "value" for the forward values
    verdict: str                # "match" | "differs" | "missing"
    max_abs_err: Optional[float]
    note: str = ""


def _ran(t: TensorResult, mode: str) -> bool:
    return mode in t.grads or mode in t.absent


def _why(t: TensorResult, mode: str) -> str:
    return t.absent.get(mode) or "no gradient"


def _projections_row(op: str, name: str, a: TensorResult, b: TensorResult) -> Optional[ParityRow]:
    """A big tensor's numeric reference is no per-element gradient but its derivatives along
    seeded random directions, the same in torch and TF (backends/numeric_dirs.py): those are
    compared ("no gradient in either" claimed a match of nothing). None when either lacks them."""
    pa = a.numeric.projections.get(Mode.NUMERIC) if a.numeric is not None else None
    pb = b.numeric.projections.get(Mode.NUMERIC) if b.numeric is not None else None
    if pa is None or pb is None or np.shape(pa) != np.shape(pb):
        return None
    dtype = "float32" if "float32" in (a.dtype, b.dtype) else "float64"
    m = pair_metrics(np.asarray(pa, np.float64), np.asarray(pb, np.float64),
                     tolerances(dtype, numeric=True))
    n = int(np.size(pa))
    note = f"compared along {n} random directions (numeric g·v; no per-element values)"
    if not m.allclose:
        note += f"; differs along {m.n_differ} of {n}"
    return ParityRow(op, name, Mode.NUMERIC, "match" if m.allclose else "differs",
                     m.max_abs_err, note)


def _parity_row(op: str, name: str, mode: str, a: TensorResult, b: TensorResult) -> Optional[ParityRow]:
    """a: torch, b: tf."""
    if mode == "value":
        ga, gb = a.value, b.value
        ran_a, ran_b = ga is not None, gb is not None
    else:
        ga, gb = a.grads.get(mode), b.grads.get(mode)
        ran_a, ran_b = _ran(a, mode), _ran(b, mode)
    if not ran_a and not ran_b:
        return None
    if not ran_a or not ran_b:
        lost = Framework.TORCH if not ran_a else Framework.TF
        return ParityRow(op, name, mode, "missing", None, f"{mode} was not run in {lost}")
    if ga is None and gb is None:
        projected = _projections_row(op, name, a, b) if mode == Mode.NUMERIC else None
        if projected is not None:
            return projected
        return ParityRow(op, name, mode, "match", 0.0,
                         f"no gradient in either (torch: {_why(a, mode)}; tf: {_why(b, mode)})")
    notes = []
    for fw, t, g, other in ((Framework.TORCH, a, ga, gb), (Framework.TF, b, gb, ga)):
        if g is None:
            o = np.asarray(other)
            desc = "zeros" if not np.any(o) else "nonzero"
            notes.append(f"{fw}: no gradient ({_why(t, mode)}), {'tf' if fw == 'torch' else 'torch'}: "
                         f"{desc} (absent is not zero)")
    one_absent = (ga is None) != (gb is None)
    ga = np.zeros_like(np.asarray(gb, dtype=np.float64)) if ga is None else ga
    gb = np.zeros_like(np.asarray(ga, dtype=np.float64)) if gb is None else gb
    dtype = "float32" if "float32" in (a.dtype, b.dtype) else "float64"
    m = pair_metrics(ga, gb, tolerances(dtype, numeric=(mode == Mode.NUMERIC)))
    if m.shape_mismatch:
        notes.append(f"shape {m.shape_mismatch}")
    elif not m.allclose:
        notes.append(f"differs at {m.n_differ} of {m.n} elements")
    same = m.allclose and not one_absent
    return ParityRow(op, name, mode, "match" if same else "differs",
                     None if one_absent else m.max_abs_err,
                     "; ".join(notes))


def parity(results: Iterable[RunResult]) -> list[ParityRow]:
    """torch vs tf for each op name run in both (first result of each framework; failed runs are
    left out). One row per tensor in both and per mode, plus "value" for the forward values."""
    by_name: dict[str, dict[str, RunResult]] = {}
    for r in results:
        if r.status == "ok":
            by_name.setdefault(r.name, {}).setdefault(r.framework, r)
    rows = []
    for op, pair in by_name.items():
        if Framework.TORCH not in pair or Framework.TF not in pair:
            continue
        for a in pair[Framework.TORCH].tensors:
            b = pair[Framework.TF].tensor(a.name)
            if b is None:
                continue
            for mode in ("value",) + MODES:
                row = _parity_row(op, a.name, mode, a, b)
                if row is not None:
                    rows.append(row)
    return rows
