"""A GradientTape's gradients read back as the arrays a run sends: the probe's second
gradient, bfloat16 as float32, and the dtype a grad function returned. Worker-only."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from gradviz.backends.tf_arrays import host_array
from gradviz.backends.tf_numeric_kit import _watchable
from gradviz.backends.upstream_probe import probe_skipped_reason


def probe_grads(tape, recorded: dict, targets: list, probe) -> tuple[dict, str]:
    """The inputs' and weights' gradients under the probe's upstream (upstream_probe), from
    the run's persistent tape after the run's own gradient; ({}, why) when the op's grad
    function raises when called a second time (it frees its state: it runs once in training),
    ({}, "") when there is nothing to probe."""
    outs = [(n, t) for n, (t, role) in recorded.items() if role == "output" and t.dtype.is_floating]
    wrt = [(n, t) for n, t, role in targets if role in ("input", "param")]
    if not outs or not wrt:
        return {}, ""
    ups = [tf.constant(probe(n, tuple(t.shape)), dtype=t.dtype) for n, t in outs]
    try:
        gs = tape.gradient(
            [t for _, t in outs], [_watchable(t) for _, t in wrt], output_gradients=ups
        )
    except Exception as exc:  # noqa: BLE001 - a grad that runs once: the probe alone goes
        return {}, probe_skipped_reason(exc)
    out = {}
    for (n, _), g in zip(wrt, gs):
        if isinstance(g, tf.IndexedSlices):
            g = tf.convert_to_tensor(g)
        if g is not None:
            out[n] = host_float(g)
    return out, ""


def own_dtype(g, t):
    """The gradient's dtype where it is not its tensor's: host_float makes a bfloat16 one
    float32, and the report would not know a grad function returned bfloat16."""
    if g is None:
        return None
    try:
        want = tf.as_dtype(t.dtype)
    except TypeError:
        return None
    return g.dtype.name if g.dtype != want else None


def host_float(t) -> np.ndarray:
    """host_array, with a bfloat16 tensor (a mixed_bfloat16 layer's output) as float32: numpy
    has no bfloat16 (ml_dtypes' is kind 'V'), and such an output was taken for an int tensor
    with no gradient ("neither custom nor default was run")."""
    arr = host_array(t)
    return arr.astype(np.float32) if arr.dtype.kind == "V" else arr
