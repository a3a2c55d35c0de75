"""What the torch graphs and numeric_eval are given to compute with: the few tensor functions of
a graph (F) and float64 tensors on one device (NumericKit). Worker-only."""

from __future__ import annotations

import contextlib

import numpy as np
import torch

from gradviz.backends.graphs import leaf_array


class F:
    """The few tensor functions the graphs use."""

    sum = staticmethod(torch.sum)
    mean = staticmethod(torch.mean)

    @staticmethod
    def weighted_sum(w, t):
        return torch.sum(w * t)

    @staticmethod
    def dense(x, w, b):
        return x @ w + b

    @staticmethod
    def const(arr, like):
        return torch.as_tensor(np.asarray(arr), dtype=like.dtype, device=like.device)

    @staticmethod
    def shape(t):
        return tuple(t.shape)

    @staticmethod
    def non_differentiable(outs):
        """Indices of outputs autograd does not differentiate (ctx.mark_non_differentiable,
        integer outputs); None where it cannot tell (no autograd, or no output needs a grad)."""
        integer = {i for i, o in enumerate(outs) if not o.is_floating_point()}
        if not torch.is_grad_enabled() or not any(o.requires_grad for o in outs):
            return integer or None
        return {i for i, o in enumerate(outs) if not o.requires_grad} | integer


def _fits(out, a, b) -> bool:
    """`out` can take an elementwise result of a and b with the values and layout a fresh one
    would have: same shape and strides all three (no broadcast, no reordered reduction later),
    the result's dtype and device, and no memory shared with a or b."""
    return (
        out is not None
        and a.shape == b.shape == out.shape
        and a.stride() == b.stride() == out.stride()
        and out.dtype == torch.result_type(a, b)
        and out.device == a.device == b.device
        and out.data_ptr() not in (a.data_ptr(), b.data_ptr())
    )


class NumericKit:
    """What numeric_eval needs of torch: float64 tensors on one device, a few tensor functions."""

    F = F

    def __init__(self, device):
        self.device = device
        self._steps: dict = {}  # shape -> the float64 buffer of the direction being evaluated

    @contextlib.contextmanager
    def scope(self):
        # One intra-op thread: the numeric pass runs at low priority beside the other framework's
        # worker and the window, and OpenMP threads spinning for a descheduled sibling made each
        # 10^6-element op 5x slower on a busy 2-core machine.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.no_grad():
                yield
        finally:
            torch.set_num_threads(threads)

    def tensor(self, arr, copy=True):
        arr = leaf_array(arr)  # float64; int64 / bool inputs as they are
        return (torch.tensor if copy else torch.as_tensor)(arr, device=self.device)

    def numbers(self, t) -> np.ndarray:
        t = t.detach().double().cpu().numpy() if torch.is_tensor(t) else t
        return np.asarray(t, dtype=np.float64).reshape(-1)

    def version(self, t) -> int:
        return t._version  # bumped by every in-place change, views included

    def step(self, delta, scale):
        """The direction as a float64 tensor; axpy scales it on the fly. int8 ±1 (the projections'
        directions) is cast into a buffer reused for the next direction: an int8 operand made
        torch.add cast it per element, twice as slow as the cast once."""
        if delta.dtype == np.float64:
            return torch.as_tensor(delta, device=self.device), scale
        buf = self._steps.get(delta.shape)
        if buf is None:
            buf = self._steps[delta.shape] = torch.empty(
                delta.shape, dtype=torch.float64, device=self.device
            )
        return buf.copy_(torch.from_numpy(np.ascontiguousarray(delta))), scale

    def axpy(self, a, b, scale, out=None):
        """a + scale * b in one pass; into `out` (an earlier result) where it fits (_fits)."""
        if _fits(out, a, b):
            return torch.add(a, b, alpha=scale, out=out)
        return torch.add(a, b, alpha=scale)

    def same_layout(self, a, b) -> bool:  # shape, strides, dtype, device: 1.0 * b is then b
        return (
            a.shape == b.shape
            and a.stride() == b.stride()
            and (a.dtype, a.device) == (b.dtype, b.device)
        )

    def mul(self, a, b, out=None):
        """a * b; into `out` (an earlier result) where it fits (_fits)."""
        if _fits(out, a, b):
            return torch.mul(a, b, out=out)
        return a * b

    def reduce(self, t, mean):
        dims = tuple(range(1, t.dim()))
        if not dims:
            return t
        return t.mean(dim=dims) if mean else t.sum(dim=dims)

    def matmul(self, a, b):
        return torch.matmul(a, b)

    def reshape(self, t, shape):
        return t.reshape(shape)

    def concat(self, ts):
        return torch.cat(ts)

    def param(self, built, name):
        return built.params()[name].detach().clone()

    def assign(self, built, name, t):
        with torch.no_grad():
            built.params()[name].copy_(t)
