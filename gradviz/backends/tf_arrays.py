"""numpy arrays into TensorFlow and back without copying the big ones. Worker-only.

A 10^7-element run of the `op` graph in two modes moved every array through TensorFlow by copy:
`tf.constant(float64 values, dtype=float32)` casts into a fresh numpy array and copies that into
a fresh TF buffer, once per mode for each leaf and upstream gradient, and `.numpy()` copies every
value and gradient back out (12 arrays of 40 MB). Freshly touched memory is what costs at that
size: on the measured VMs the host takes back memory the guest freed a few seconds ago (free page
reporting), so touching it again cost ~10x a warm memcpy and dominated the run (ARCHITECTURE.md,
"TF request overhead at 10^7"). Here:

- `HostArrays.tensor`: a float array is cast once per run (per array and dtype) into a 64-byte
  aligned numpy buffer that every mode's tensor shares through DLPack, on the CPU. TF's kernels
  abort the process on a buffer less aligned than EIGEN_MAX_ALIGN_BYTES (tensor.cc IsAligned),
  hence the explicit alignment; small arrays, other devices and integer arrays take
  `tf.constant` as before. The cast is numpy's, the one `tf.constant(x, dtype=...)` does inside,
  so the values are the same bits (`tf.cast` is not: it flushes subnormals).
- `host_array`: an eager tensor's values as numpy without a copy (what `.numpy()` returns before
  it copies); variables, whose buffers later assigns may reuse, are still copied.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.ops import EagerTensor

ZERO_COPY_BYTES = 1 << 20  # below this a copy costs less than the calls that avoid it
ALIGN = 64  # EIGEN_MAX_ALIGN_BYTES of TensorFlow's CPU kernels
_CAST_TO = (tf.float32, tf.float64)  # the run's dtypes; numpy casts to these as TF would


def host_array(t) -> np.ndarray:
    """The values of a tensor (or variable) as numpy; an eager tensor's without a copy."""
    if isinstance(t, EagerTensor):
        return np.asarray(t._numpy())  # .numpy() is this plus a copy
    return np.asarray(t.numpy())


def aligned_empty(shape: tuple, dtype) -> np.ndarray:
    """A new C-contiguous array whose data starts on an ALIGN-byte boundary (values unset)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    raw = np.empty(size * dtype.itemsize + ALIGN, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGN
    return raw[start : start + size * dtype.itemsize].view(dtype).reshape(shape)


def aligned_cast(values: np.ndarray, dtype) -> np.ndarray:
    """`values` cast to `dtype` (numpy's cast, as tf.constant does it) in a new C-contiguous
    array whose data starts on an ALIGN-byte boundary."""
    out = aligned_empty(values.shape, dtype)
    np.copyto(out, values, casting="unsafe")
    return out


def shared(buf: np.ndarray) -> tf.Tensor:
    """A tensor over `buf`'s own memory (DLPack, no copy); `buf` from aligned_empty or
    aligned_cast, as TF's kernels need."""
    return tf.experimental.dlpack.from_dlpack(buf.__dlpack__())


def on_cpu(device: str) -> bool:
    return tf.DeviceSpec.from_string(device or "/CPU:0").device_type in (None, "CPU")


class HostArrays:
    """The tensors of one graph's arrays (leaves, upstream gradients, targets): each big float
    array is cast once per dtype and shared by every mode's tensor. Lives as long as the graph
    (one run): it keeps each source array, so an id() is never reused while it is cached."""

    def __init__(self):
        self._casts: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}

    def tensor(self, values, dtype: tf.DType, device: str) -> tf.Tensor:
        arr = np.asarray(values)
        if (
            arr.nbytes < ZERO_COPY_BYTES
            or arr.dtype.kind != "f"
            or dtype not in _CAST_TO
            or not on_cpu(device)
        ):
            return tf.constant(arr, dtype=dtype)
        key = (id(values), dtype.name)
        hit = self._casts.get(key)
        if hit is None or hit[0] is not values:
            hit = self._casts[key] = (values, aligned_cast(arr, dtype.as_numpy_dtype))
        return shared(hit[1])
