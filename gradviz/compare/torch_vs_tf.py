"""torch vs tf: the same op's tensors compared across frameworks, per mode (numpy only).

A TF `None` gradient and torch zeros are different data (DESIGN.md: absent is not zero): a row
where one framework has a gradient and the other none is `differs`, whatever the values; the
error is measured against zeros only to show how far apart they are, and the note says what
each framework gave.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np

from gradviz.compare.metrics import pair_metrics, tolerances
from gradviz.model import MODES, RunResult, TensorResult


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
        lost = "torch" if not ran_a else "tf"
        return ParityRow(op, name, mode, "missing", None, f"{mode} was not run in {lost}")
    if ga is None and gb is None:
        return ParityRow(op, name, mode, "match", 0.0,
                         f"no gradient in either (torch: {_why(a, mode)}; tf: {_why(b, mode)})")
    notes = []
    for fw, t, g, other in (("torch", a, ga, gb), ("tf", b, gb, ga)):
        if g is None:
            o = np.asarray(other)
            desc = "zeros" if not np.any(o) else "nonzero"
            notes.append(f"{fw}: no gradient ({_why(t, mode)}), {'tf' if fw == 'torch' else 'torch'}: "
                         f"{desc} (absent is not zero)")
    one_absent = (ga is None) != (gb is None)
    ga = np.zeros_like(np.asarray(gb, dtype=np.float64)) if ga is None else ga
    gb = np.zeros_like(np.asarray(ga, dtype=np.float64)) if gb is None else gb
    dtype = "float32" if "float32" in (a.dtype, b.dtype) else "float64"
    m = pair_metrics(ga, gb, tolerances(dtype, numeric=(mode == "numeric")))
    if m.get("shape_mismatch"):
        notes.append(f"shape {m['shape_mismatch']}")
    elif not m["allclose"]:
        notes.append(f"differs at {m['n_differ']} of {m['n']} elements")
    same = m["allclose"] and not one_absent
    return ParityRow(op, name, mode, "match" if same else "differs", m["max_abs_err"],
                     "; ".join(notes))


KNOWN_MAX = 1024     # memo entries before those of arrays already freed are dropped


def _arrays(t: TensorResult, mode: str):
    return t.value if mode == "value" else t.grads.get(mode)


def _known_row(known: Optional[dict], key: tuple, ga, gb) -> Optional[ParityRow]:
    """The row an earlier call made from the very same two arrays (the app's final result of an
    op holds its partial result's arrays: engine.numeric_pass)."""
    if known is None or ga is None or gb is None:
        return None
    hit = known.get(key)
    if hit is None:
        return None
    ref_a, ref_b, row = hit
    return row if ref_a() is ga and ref_b() is gb else None


def _remember(known: Optional[dict], key: tuple, ga, gb, row: ParityRow) -> None:
    if known is None or ga is None or gb is None:
        return
    try:    # weak: the memo never keeps an old run's arrays alive
        known[key] = (weakref.ref(ga), weakref.ref(gb), row)
    except TypeError:
        return
    if len(known) > KNOWN_MAX:
        for k in [k for k, (ra, rb, _row) in known.items() if ra() is None or rb() is None]:
            del known[k]


def parity(results: Iterable[RunResult], known: Optional[dict] = None) -> list[ParityRow]:
    """torch vs tf for each op name run in both (first result of each framework; failed runs are
    left out). One row per tensor in both and per mode, plus "value" for the forward values.
    `known`: a dict this function fills, passed again on the next call: a row of two arrays it
    has already compared (the same objects, not equal copies) is taken from it."""
    by_name: dict[str, dict[str, RunResult]] = {}
    for r in results:
        if r.status == "ok":
            by_name.setdefault(r.name, {}).setdefault(r.framework, r)
    rows = []
    for op, pair in by_name.items():
        if "torch" not in pair or "tf" not in pair:
            continue
        for a in pair["torch"].tensors:
            b = pair["tf"].tensor(a.name)
            if b is None:
                continue
            for mode in ("value",) + MODES:
                ga, gb, key = _arrays(a, mode), _arrays(b, mode), (op, a.name, mode)
                row = _known_row(known, key, ga, gb)
                if row is None:
                    row = _parity_row(op, a.name, mode, a, b)
                    if row is not None:
                        _remember(known, key, ga, gb, row)
                if row is not None:
                    rows.append(row)
    return rows
