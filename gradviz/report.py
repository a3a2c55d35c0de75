"""Reports on disk: JSON (DESIGN.md's shape, strict JSON), NPZ (every array), CSV (one tensor).

Every write is atomic (gradviz.atomic_file, the writer figures use too): a temp file in the
target folder, fsync, os.replace. A failed write leaves no file behind (neither partial target
nor temp) and raises ReportError naming the path.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
from collections.abc import Callable, Iterable, Sequence

import numpy as np

import gradviz
from gradviz.compare import OpComparison, compare_result, parity, summary_counts
from gradviz.compare.verdicts import PASSING
from gradviz.errors import GradvizError
from gradviz.flow import flow_of
from gradviz.model import MODES, RunResult, RunSettings, TensorResult


class ReportError(GradvizError, OSError):
    """A report could not be written or read; the message names the path and the reason."""


# --- atomic writing ----------------------------------------------------------------------------
def _atomic_write(path: str, write: Callable[[io.IOBase], None], binary: bool) -> None:
    from gradviz.atomic_file import atomic_path

    path = os.fspath(path)
    try:
        with atomic_path(path) as tmp:
            with open(
                tmp,
                "wb" if binary else "w",
                **({} if binary else {"encoding": "utf-8", "newline": ""}),
            ) as f:
                write(f)
    except FileNotFoundError as exc:  # the folder is missing: atomic_path says which
        raise ReportError(f"cannot write {path}: {exc}") from exc
    except Exception as exc:
        raise ReportError(f"cannot write {path}: {type(exc).__name__}: {exc}") from exc


# --- JSON ----------------------------------------------------------------------------------------
def _jsonable(obj):
    """Strict-JSON form: non-finite floats become "nan" / "inf" / "-inf"; anything unknown raises."""
    if obj is None or isinstance(obj, (bool, str, int)) and not isinstance(obj, np.generic):
        return obj
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))
    if isinstance(obj, (np.integer, np.bool_)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    for attr in ("as_dict", "to_dict"):
        if callable(getattr(obj, attr, None)):
            return _jsonable(getattr(obj, attr)())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _jsonable(dataclasses.asdict(obj))
    raise TypeError(f"cannot write a {type(obj).__name__} to JSON: {obj!r:.80}")


def _error_dict(err) -> dict | None:
    if err is None:
        return None
    return {
        "type": err.type,
        "message": err.message,
        "where": err.where,
        "kind": err.kind,
        "traceback": err.traceback,
    }


def _tensor_dict(tc) -> dict:
    return {
        "name": tc.name,
        "shape": list(tc.shape),
        "verdict": tc.verdict,
        "stats": {mode: s.as_dict() for mode, s in tc.stats.items()},
        "explanation": tc.explanation,
        "role": tc.role,
        "dtype": tc.dtype,
        "tolerance": {**tc.tolerance.as_dict(), "vs_numeric": tc.numeric_tolerance.as_dict()},
        "numeric_method": tc.numeric_method,
        "metrics": {pair: m.as_dict() for pair, m in tc.metrics.items()},
        # the window reads such a passing verdict "match, numeric cancelled" / "..., failed"
        "numeric_unchecked": tc.numeric_missing,
    }


def _op_dict(r: RunResult, comp: OpComparison, findings: Sequence, flow: Sequence) -> dict:
    return {
        "name": comp.name,
        "framework": comp.framework,
        "device": comp.device,
        "status": comp.status,
        "error": _error_dict(comp.error),
        "tensors": [_tensor_dict(tc) for tc in comp.tensors],
        "diagnostics": [f.as_dict() for f in findings],
        "flow": [row.as_dict() for row in flow],
        "qualname": r.op.qualname if r.op else r.request.qualname,
        "file": r.op.file if r.op else r.request.file,
        # the line in "file"; an imported op's line is in its own file: "where" has both
        "line": r.op.line if r.op and not r.op.defined_at else None,
        "where": r.op.where if r.op else None,
        "mode_errors": {m: _error_dict(e) for m, e in r.mode_errors.items()},
        "settings": r.request.settings.as_dict(),
        "checks": [c.as_dict() for c in r.checks],
        # which parameters gradviz seeded; frozen ones kept the values the module built
        "parameters": {
            "seeded": list(r.seeded_params),
            "frozen": [t.name for t in r.tensors if t.frozen],
        },
        "probe_skipped": r.probe_skipped,
        # backward-shaped methods nothing called (GV607), and whether no custom gradient ran
        "uncalled_backward": {
            "methods": list(r.uncalled_backward),
            "no_own_gradient": r.no_own_gradient,
        },
        "warnings": list(r.warnings),
        "log": r.log,
        "elapsed": r.elapsed,
        "framework_version": r.framework_version,
    }


def report_dict(
    results: Iterable[RunResult],
    settings,
    comparisons=None,
    parity_rows=None,
    diagnostics: Sequence[Sequence] | None = None,
    load_errors=(),
    history=None,
    flows: Sequence[Sequence] | None = None,
) -> dict:
    """The JSON report as a Python dict (strict-JSON values). `diagnostics`: the findings
    (gradviz.diagnostics.Finding) of each result, aligned with `results` (the analysis's, as
    app.analysis makes them); None: none listed. `flows`: the flow rows (gradviz.flow.FlowRow)
    of each result, aligned with it (the analysis's); None: worked out here. `load_errors`: FileCatalogs of files that
    could not be loaded; each is listed and counts once as "error" in the summary, as an op
    that failed before producing a tensor does. `history`: the window's earlier runs of each
    op (gradviz.app.history.RunHistory.as_dicts), under a key of its own, "history"; without it
    (`gradviz run`: one run has no earlier ones) the key is absent."""
    results = list(results)
    comps = list(comparisons) if comparisons is not None else [compare_result(r) for r in results]
    if len(comps) != len(results):
        raise ValueError(f"{len(comps)} comparisons for {len(results)} results")
    findings = [()] * len(results) if diagnostics is None else list(diagnostics)
    if len(findings) != len(results):
        raise ValueError(f"{len(findings)} lists of findings for {len(results)} results")
    flows = [flow_of(r) for r in results] if flows is None else list(flows)
    if len(flows) != len(results):
        raise ValueError(f"{len(flows)} lists of flow rows for {len(results)} results")
    rows = parity(results) if parity_rows is None else parity_rows
    if isinstance(settings, RunSettings):
        settings = settings.as_dict()
    return _jsonable(
        {
            "gradviz": gradviz.__version__,
            "settings": shared_settings(settings, results),
            "ops": [_op_dict(*op) for op in zip(results, comps, findings, flows)],
            "parity": [p.as_json() for p in rows],
            "summary": _summary(comps, load_errors),
            "load_errors": [_load_error_dict(cat) for cat in load_errors],
            **({"history": list(history)} if history is not None else {}),
        }
    )


def shared_settings(settings: dict, results: list) -> dict:
    """The top-level settings: only what every op ran with. A key whose value differs between
    ops (a whole-run export of the app mixes runs) is left out and named in `varies_by_op`;
    each op's own settings are in its entry. A key all ops agree on takes their value."""
    out = dict(settings or {})
    varies = []
    per_op = [r.request.settings.as_dict() for r in results]
    for key in dict.fromkeys(k for d in per_op for k in d):
        values = {json.dumps(_jsonable(d.get(key)), sort_keys=True) for d in per_op}
        if len(values) == 1:
            out[key] = per_op[0].get(key)
        else:
            out.pop(key, None)
            varies.append(key)
    if varies:
        out["varies_by_op"] = varies
    return out


def _load_error_dict(cat) -> dict:
    # framework is null when the file failed before any framework saw it (a syntax error)
    return {"file": cat.file, "framework": cat.framework or None, "error": _error_dict(cat.error)}


def _summary(comps, load_errors) -> dict:
    counts = summary_counts(comps)
    counts["error"] = counts.get("error", 0) + len(load_errors)
    # of the passing verdicts counted, those not checked against numeric (see _tensor_dict)
    counts["numeric_unchecked"] = sum(
        1 for c in comps for t in c.tensors if t.numeric_missing and t.verdict in PASSING
    )
    return counts


def write_json(
    path,
    results,
    settings,
    comparisons=None,
    parity_rows=None,
    diagnostics=None,
    load_errors=(),
    history=None,
    flows=None,
) -> dict:
    """Write the JSON report (DESIGN.md's keys plus explanation/metrics/role/dtype/tolerance/log).
    Returns the dict written."""
    try:
        data = report_dict(
            results, settings, comparisons, parity_rows, diagnostics, load_errors, history, flows
        )
        text = json.dumps(data, indent=1, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ReportError(f"cannot write {path}: {exc}") from exc
    _atomic_write(path, lambda f: f.write(text + "\n"), binary=False)
    return data


def read_json(path) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as exc:
        raise ReportError(f"cannot read {path}: {exc}") from exc


# --- NPZ -----------------------------------------------------------------------------------------
def npz_arrays(results: Iterable[RunResult]) -> dict[str, np.ndarray]:
    """`{framework}/{op}/{mode}/{tensor}` gradients and `{framework}/{op}/value/{tensor}` values.
    A second run of the same op name in the same framework gets `{op}#2`, and so on."""
    out: dict[str, np.ndarray] = {}
    seen: dict[tuple[str, str], int] = {}
    for r in results:
        n = seen[(r.framework, r.name)] = seen.get((r.framework, r.name), 0) + 1
        op = r.name if n == 1 else f"{r.name}#{n}"
        for t in r.tensors:
            if t.value is not None:
                out[f"{r.framework}/{op}/value/{t.name}"] = np.asarray(t.value)
            for mode in MODES:
                if t.grads.get(mode) is not None:
                    out[f"{r.framework}/{op}/{mode}/{t.name}"] = np.asarray(t.grads[mode])
    return out


def write_npz(path, results: Iterable[RunResult]) -> list[str]:
    """Write every value and gradient; returns the keys written."""
    arrays = npz_arrays(results)
    _atomic_write(path, lambda f: np.savez(f, **arrays), binary=True)
    return list(arrays)


def read_npz(path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise ReportError(f"cannot read {path}: {exc}") from exc


# --- CSV (one tensor) ------------------------------------------------------------------------
def _cell(x) -> str:
    return repr(float(x))  # shortest text that reads back to the same float64 (nan, inf too)


def write_csv(path, tensor: TensorResult) -> list[str]:
    """One row per element (flat C-order index): index, value, then each mode that ran; a mode
    that ran but gave no gradient has empty cells. Returns the header."""
    n = int(np.prod(tensor.shape)) if tensor.shape else 1
    modes = [m for m in MODES if m in tensor.grads or m in tensor.absent]
    cols = [np.asarray(tensor.value).reshape(-1) if tensor.value is not None else None]
    cols += [
        np.asarray(tensor.grads[m]).reshape(-1) if tensor.grads.get(m) is not None else None
        for m in modes
    ]
    for name, c in zip(["value"] + modes, cols):
        if c is not None and c.size != n:
            raise ReportError(
                f"cannot write {path}: {tensor.name} {name} has {c.size} elements, "
                f"shape {tuple(tensor.shape)} needs {n}"
            )
    header = ["index", "value"] + modes

    def write(f):
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for i in range(n):
            w.writerow([i] + ["" if c is None else _cell(c[i]) for c in cols])

    _atomic_write(path, write, binary=False)
    return header


def read_csv(path) -> dict[str, np.ndarray]:
    """Columns of a write_csv file as float64 arrays (empty cells -> NaN; index as int)."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f))
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc}") from exc
    header, body = rows[0], rows[1:]
    out = {
        h: np.array([float(r[j]) if r[j] != "" else np.nan for r in body])
        for j, h in enumerate(header)
    }
    out["index"] = out["index"].astype(np.int64)
    return out
