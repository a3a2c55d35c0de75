"""What the TensorFlow graphs and numeric_eval are given to compute with: the few tensor
functions of a graph (F, and RunF for one differentiate call) and float64 tensors on one device
(NumericKit). Worker-only."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from gradviz.backends.graphs import leaf_array
from gradviz.backends.tf_arrays import (
    ZERO_COPY_BYTES,
    HostArrays,
    aligned_cast,
    aligned_empty,
    on_cpu,
    shared,
)


def _watchable(t):
    # Keras 3 variables wrap a tf.Variable; the tape knows the inner one.
    return getattr(t, "value", t) if not tf.is_tensor(t) else t


class F:
    """The few tensor functions the graphs use (`RunF` in differentiate)."""

    sum = staticmethod(tf.reduce_sum)
    mean = staticmethod(tf.reduce_mean)

    @staticmethod
    def weighted_sum(w, t):
        return tf.reduce_sum(w * t)

    @staticmethod
    def dense(x, w, b):
        return tf.tensordot(x, w, axes=[[len(x.shape) - 1], [0]]) + b

    @staticmethod
    def const(arr, like):
        return tf.constant(np.asarray(arr), dtype=like.dtype)

    @staticmethod
    def shape(t):
        return tuple(int(s) for s in t.shape)

    @staticmethod
    def non_differentiable(outs):
        """Integer and bool outputs (TF has no mark_non_differentiable)."""
        return {i for i, o in enumerate(outs) if not o.dtype.is_floating}


class RunF(F):
    """F for one differentiate call: constants (upstream gradients, targets) come from the
    graph's HostArrays, cast once per run rather than once per mode, without copies."""

    def __init__(self, arrays: HostArrays):
        self._arrays = arrays

    def const(self, arr, like):
        return self._arrays.tensor(arr, like.dtype, like.device)


class NumericKit:
    """What numeric_eval needs of TensorFlow: float64 tensors on one device, a few functions."""

    F = F

    def __init__(self, device):
        self.device = device
        self._steps: dict = {}  # shape -> the buffer of the direction being evaluated

    def scope(self):
        return tf.device(self.device)

    def tensor(self, arr, copy=True):
        values = np.asarray(arr)
        big = values.dtype.kind not in "bi" and values.size * 8 >= ZERO_COPY_BYTES
        if big and on_cpu(self.device):  # cast once, into a buffer TF shares, not twice
            return shared(aligned_cast(values, np.float64))
        return tf.constant(leaf_array(values))  # float64; int64 / bool inputs as they are

    def numbers(self, t) -> np.ndarray:
        return np.asarray(t.numpy() if tf.is_tensor(t) else t, dtype=np.float64).reshape(-1)

    def version(self, t) -> int:
        return 0  # tensors cannot be changed in place

    def step(self, delta, scale):
        # Scaled once for both signs: TF has no fused a + s * b. A big direction is scaled by
        # numpy into a buffer shared with TF (DLPack) and reused for the next direction, rather
        # than copied into a new TF tensor, sliced and multiplied there (the same product). The
        # projections' directions come as int8 ±1: the same float64 product, read at an eighth.
        big = delta.size * 8 >= ZERO_COPY_BYTES
        if big and delta.dtype.kind in "fi" and on_cpu(self.device):
            buf = self._steps.get(delta.shape)
            if buf is None:
                buf = self._steps[delta.shape] = aligned_empty(delta.shape, np.float64)
            np.multiply(delta, scale, out=buf)
            return shared(buf), 1.0
        return tf.constant(np.asarray(delta, dtype=np.float64)) * scale, 1.0

    @staticmethod
    def same_layout(a, b) -> bool:
        """a and b alike in shape and dtype (TF tensors are dense, row-major)."""
        return a.shape == b.shape and a.dtype == b.dtype

    def axpy(self, a, b, scale, out=None):  # TF writes no tensor in place: `out` is not used
        if scale in (1.0, -1.0):
            return a + b if scale > 0 else a - b
        return a + scale * b

    def reduce(self, t, mean):
        axes = list(range(1, len(t.shape)))
        if not axes:
            return t
        return (tf.reduce_mean if mean else tf.reduce_sum)(t, axis=axes)

    def matmul(self, a, b):
        return tf.linalg.matmul(a, b)

    def reshape(self, t, shape):
        return tf.reshape(t, shape)

    def concat(self, ts):
        return tf.concat(ts, axis=0)

    def param(self, built, name):
        return tf.cast(tf.identity(_watchable(built.params()[name])), tf.float64)

    def assign(self, built, name, t):
        v = built.params()[name]
        v.assign(tf.cast(t, v.dtype))
