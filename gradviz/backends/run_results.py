"""The runner's working dict of tensors turned into the RunResult the worker sends back."""

from __future__ import annotations

import numpy as np

from gradviz.backends.graphs import differentiable
from gradviz.backends.op_metadata import meta_where
from gradviz.model import ErrorInfo, OpInfo, RunResult, TensorResult
from gradviz.vocab import ErrorKind

# inputs first, then parameters, then what the graph computed
_ROLE_ORDER = {"input": 0, "param": 1, "intermediate": 2, "output": 2}


def tensor_results(tensors: dict, numeric_infos: dict, dtype: str) -> tuple[TensorResult, ...]:
    items = sorted(tensors.items(), key=lambda kv: _ROLE_ORDER.get(kv[1]["role"], 3))
    return tuple(_tensor_result(name, t, numeric_infos.get(name), dtype) for name, t in items)


def _tensor_result(name: str, t: dict, info: dict | None, dtype: str) -> TensorResult:
    grads = dict(t["grads"])
    absent = dict(t["absent"])
    if info is not None and info.get("grad") is not None:
        grads["numeric"] = info["grad"]
    elif info is not None and info.get("why"):
        absent["numeric"] = info["why"]
    value = t["value"]
    shape = tuple(value.shape) if value is not None else ()
    own = (
        str(np.asarray(value).dtype) if value is not None and not differentiable(value) else dtype
    )  # int64 / bool inputs keep theirs
    return TensorResult(
        name=name,
        role=t["role"],
        shape=shape,
        dtype=own,
        value=value,
        grads=grads,
        absent=absent,
        numeric=info["info"] if info is not None else None,
        probe=t.get("probe"),
        frozen=bool(t.get("frozen")),
        grad_dtypes=dict(t.get("grad_dtypes", {})),
    )


def numeric_part(t: TensorResult) -> TensorResult:
    """Only the numeric mode of a tensor: the quick pass already sent the value and the rest."""
    grads = {m: g for m, g in t.grads.items() if m == "numeric"}
    absent = {m: why for m, why in t.absent.items() if m == "numeric"}
    return TensorResult(
        name=t.name,
        role=t.role,
        shape=t.shape,
        dtype=t.dtype,
        value=None,
        grads=grads,
        absent=absent,
        numeric=t.numeric,
    )


def probe_skipped(skipped: dict) -> str:
    """RunResult.probe_skipped: the custom mode's reason (what the verdict is about), else the
    default mode's, which says so."""
    if "custom" in skipped:
        return skipped["custom"]
    return f"in the default mode, {skipped['default']}" if "default" in skipped else ""


def metadata_error(message: str, meta: dict, info: OpInfo) -> ErrorInfo:
    return ErrorInfo("MetadataError", message, meta_where(meta, info.where), kind=ErrorKind.ERROR)


def error_result(req, info, err: ErrorInfo, **kw) -> RunResult:
    return RunResult(request=req, op=info, status="error", error=err, **kw)
