"""What the JAX graphs and numeric_eval compute with: the few array functions of a graph (F)
and float64 arrays on one device (NumericKit, with jax_enable_x64 on in its scope). Worker-only."""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np

from gradviz.backends.graphs import leaf_array
from gradviz.backends.jax_devices import device_of


def is_array(x) -> bool:
    return isinstance(x, jax.Array)


class F:
    """The few array functions the graphs use."""

    sum = staticmethod(jnp.sum)
    mean = staticmethod(jnp.mean)

    @staticmethod
    def weighted_sum(w, t):
        return jnp.sum(w * t)

    @staticmethod
    def dense(x, w, b):
        return jnp.tensordot(x, w, axes=[[x.ndim - 1], [0]]) + b

    @staticmethod
    def const(arr, like):
        return jnp.asarray(np.asarray(arr), dtype=like.dtype)

    @staticmethod
    def shape(t):
        return tuple(int(s) for s in t.shape)

    @staticmethod
    def non_differentiable(outs):
        """Integer and bool outputs (JAX has no mark_non_differentiable)."""
        return {i for i, o in enumerate(outs) if not jnp.issubdtype(o.dtype, jnp.inexact)}


class NumericKit:
    """What numeric_eval needs of JAX: float64 arrays on one device, a few functions."""

    F = F

    def __init__(self, device):
        self.device = device

    @contextlib.contextmanager
    def scope(self):
        with jax.default_device(device_of(self.device)), jax.enable_x64(True):
            yield

    def tensor(self, arr, copy=True):
        return jnp.asarray(leaf_array(arr))  # float64; int64 / bool inputs as they are

    def numbers(self, t) -> np.ndarray:
        return np.asarray(t, dtype=np.float64).reshape(-1)

    def version(self, t) -> int:
        return 0  # JAX arrays are immutable

    def step(self, delta, scale):
        return jnp.asarray(delta, dtype=jnp.float64) * scale, 1.0  # int8 ±1 for projections

    @staticmethod
    def same_layout(a, b) -> bool:
        return a.shape == b.shape and a.dtype == b.dtype

    def axpy(self, a, b, scale, out=None):
        if scale in (1.0, -1.0):
            return a + b if scale > 0 else a - b
        return a + scale * b

    def reduce(self, t, mean):
        axes = tuple(range(1, t.ndim))
        if not axes:
            return t
        return (jnp.mean if mean else jnp.sum)(t, axis=axes)

    def matmul(self, a, b):
        return jnp.matmul(a, b)

    def reshape(self, t, shape):
        return jnp.reshape(t, shape)

    def concat(self, ts):
        return jnp.concatenate(ts, axis=0)

    def param(self, built, name):
        return jnp.asarray(built.params()[name], dtype=jnp.float64)

    def assign(self, built, name, t):
        built.put(name, t)
