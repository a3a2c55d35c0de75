"""Parity: the same op's tensors compared across frameworks, per mode (numpy only). An op of
one name in two or three frameworks gives a pair for each two of them (torch-tf, torch-jax,
tf-jax, in vocab.Framework's order); a torch-tf row is written to JSON as it always was, any
other pair's names its two frameworks (`frameworks`).

A TF `None` gradient and torch zeros are different data (DESIGN.md: absent is not zero): a row
where one framework has a gradient and the other none is `differs`, whatever the values. Such a
row has no error number (None, shown "—"): measured against zeros it read 0 for TF None vs torch
zeros, a number that said "equal" next to a `differs`. The note says what each framework gave.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from gradviz.compare.metrics import pair_metrics, tolerances
from gradviz.model import MODES, RunResult, TensorResult
from gradviz.vocab import Framework, Mode

TORCH_TF = (Framework.TORCH.value, Framework.TF.value)  # the pair a row names by default


@dataclass(frozen=True)
class ParityRow:
    op: str
    tensor: str
    mode: str  # a gradient mode, or "value" for the forward values
    verdict: str  # "match" | "differs" | "missing"
    max_abs_err: float | None
    note: str = ""
    frameworks: tuple[str, str] = TORCH_TF  # (a, b): the two compared

    def as_json(self) -> dict:
        """The report's row: torch-tf rows as before (no `frameworks`), others naming theirs."""
        out = dataclasses.asdict(self)
        if tuple(self.frameworks) == TORCH_TF:
            del out["frameworks"]
        else:
            out["frameworks"] = list(self.frameworks)
        return out


def _ran(t: TensorResult, mode: str) -> bool:
    return mode in t.grads or mode in t.absent


def _why(t: TensorResult, mode: str) -> str:
    return t.absent.get(mode) or "no gradient"


def _projections_row(
    op: str, name: str, a: TensorResult, b: TensorResult, fws: tuple[str, str] = TORCH_TF
) -> ParityRow | None:
    """A big tensor's numeric reference is no per-element gradient but its derivatives along
    seeded random directions, the same in every framework (backends/numeric_dirs.py): those are
    compared ("no gradient in either" claimed a match of nothing). None when either lacks them."""
    pa = a.numeric.projections.get(Mode.NUMERIC) if a.numeric is not None else None
    pb = b.numeric.projections.get(Mode.NUMERIC) if b.numeric is not None else None
    if pa is None or pb is None or np.shape(pa) != np.shape(pb):
        return None
    dtype = "float32" if "float32" in (a.dtype, b.dtype) else "float64"
    m = pair_metrics(
        np.asarray(pa, np.float64), np.asarray(pb, np.float64), tolerances(dtype, numeric=True)
    )
    n = int(np.size(pa))
    note = f"compared along {n} random directions (numeric g·v; no per-element values)"
    if not m.allclose:
        note += f"; differs along {m.n_differ} of {n}"
    return ParityRow(
        op, name, Mode.NUMERIC, "match" if m.allclose else "differs", m.max_abs_err, note, fws
    )


def _parity_row(
    op: str, name: str, mode: str, a: TensorResult, b: TensorResult, fws: tuple[str, str] = TORCH_TF
) -> ParityRow | None:
    """a: the tensor in fws[0], b: in fws[1]."""
    fa, fb = fws
    if mode == "value":
        ga, gb = a.value, b.value
        ran_a, ran_b = ga is not None, gb is not None
    else:
        ga, gb = a.grads.get(mode), b.grads.get(mode)
        ran_a, ran_b = _ran(a, mode), _ran(b, mode)
    if not ran_a and not ran_b:
        return None
    if not ran_a or not ran_b:
        lost = fa if not ran_a else fb
        return ParityRow(op, name, mode, "missing", None, f"{mode} was not run in {lost}", fws)
    if ga is None and gb is None:
        projected = _projections_row(op, name, a, b, fws) if mode == Mode.NUMERIC else None
        if projected is not None:
            return projected
        return ParityRow(
            op,
            name,
            mode,
            "match",
            0.0,
            f"no gradient in either ({fa}: {_why(a, mode)}; {fb}: {_why(b, mode)})",
            fws,
        )
    notes = []
    for fw, t, g, other, fo in ((fa, a, ga, gb, fb), (fb, b, gb, ga, fa)):
        if g is None:
            o = np.asarray(other)
            desc = "zeros" if not np.any(o) else "nonzero"
            notes.append(f"{fw}: no gradient ({_why(t, mode)}), {fo}: {desc} (absent is not zero)")
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
    return ParityRow(
        op,
        name,
        mode,
        "match" if same else "differs",
        None if one_absent else m.max_abs_err,
        "; ".join(notes),
        fws,
    )


def framework_pairs(frameworks: Iterable[str]) -> list[tuple[str, str]]:
    """Each two of `frameworks`, in vocab.Framework's order (torch-tf, torch-jax, tf-jax)."""
    order = [fw.value for fw in Framework]
    have = sorted(set(frameworks), key=lambda f: order.index(f) if f in order else len(order))
    return [(a, b) for i, a in enumerate(have) for b in have[i + 1 :]]


def parity(results: Iterable[RunResult]) -> list[ParityRow]:
    """Each two frameworks for each op name run in both (first result of each framework; failed
    runs are left out). One row per tensor in both and per mode, plus "value" for the forward
    values; the torch-tf rows of an op first."""
    by_name: dict[str, dict[str, RunResult]] = {}
    for r in results:
        if r.status == "ok":
            by_name.setdefault(r.name, {}).setdefault(r.framework, r)
    rows = []
    for op, ran in by_name.items():
        for fws in framework_pairs(ran):
            for a in ran[fws[0]].tensors:
                b = ran[fws[1]].tensor(a.name)
                if b is None:
                    continue
                for mode in ("value",) + MODES:
                    row = _parity_row(op, a.name, mode, a, b, fws)
                    if row is not None:
                        rows.append(row)
    return rows
