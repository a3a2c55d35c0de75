"""Many forwards of one graph with one tensor perturbed, for the numeric reference.

The leaves are made into float64 framework tensors once; each perturbation is added inside the
framework (a leaf's values, an intermediate through the graph's `rec`, a parameter by assignment).
Where the op allows it, many perturbations of one leaf or intermediate run as one forward over a
leading batch dimension; a probe decides per tensor whether the op allows it (a forward that mixes
rows, reduces over the batch dimension or cannot take it at all falls back to one perturbation
at a time). Parameters are always perturbed one at a time: a module has one copy of them.

The framework part is a small "kit" from the adapter (tensor, scope, reduce, matmul, ...).
"""

from __future__ import annotations

import time

import numpy as np

from gradviz.backends.graphs import leaf_array, rng_for
from gradviz.backends.numeric_calls import UnmovedCalls
from gradviz.backends.user_code import USER_FAILURES
from gradviz.errors import GradvizError

CHUNK = 1 << 20  # elements of one batched tensor: bounds a batch's memory
PROBE_RTOL = 1e-9  # batched vs one-at-a-time losses of the probe must agree this closely


def dtype_name(t) -> str:
    """'float64', 'bfloat16', 'int32', ... of a torch or TF tensor."""
    dtype = t.dtype
    return str(getattr(dtype, "name", None) or dtype).rpartition(".")[2]


class BudgetUsed(GradvizError):
    """The numeric time budget ran out in the middle of a tensor."""


class BatchRefused(GradvizError):
    """The op does not take a leading batch dimension the way the probe needs."""


class CachedConsts:
    """The graph's F with its constants (upstream gradients, targets) converted once, and the
    loss's product made in one buffer, forward after forward, where the kit can (torch: a second
    fresh 8 MB tensor per forward of a 10^6-element output made malloc hand memory back and
    fault it in again, ~60 % of the forward's time; the same values). A weight of ones (the
    default upstream) is no product at all: 1.0 * t is t, bit for bit, so where w has t's shape,
    dtype and layout the loss is the sum of t itself, the same sum of the same values (one pass
    of four over memory fewer per forward of a big output)."""

    def __init__(self, F, kit=None):
        self._F = F
        self._cache: dict = {}
        self._ones: set = set()  # ids of cached constants that hold only ones
        self._mul = getattr(kit, "mul", None)
        self._same_layout = getattr(kit, "same_layout", None)
        self._product = None

    def __getattr__(self, name):
        return getattr(self._F, name)

    def const(self, arr, like):
        key = (id(arr), str(like.dtype))
        hit = self._cache.get(key)
        if hit is None:  # the array is kept with its tensor so its id() stays unique
            hit = self._cache[key] = (arr, self._F.const(arr, like))
            a = np.asarray(arr)
            if a.dtype.kind == "f" and a.size and np.all(a == 1.0):
                self._ones.add(id(hit[1]))
        return hit[1]

    def weighted_sum(self, w, t):
        if id(w) in self._ones and self._same_layout is not None and self._same_layout(w, t):
            return self._F.sum(t)
        if self._mul is None:
            return self._F.weighted_sum(w, t)
        self._product = self._mul(w, t, out=self._product)  # the last forward is over
        return self._F.sum(self._product)


class BatchedF:
    """F for tensors with a leading batch dimension: reductions keep it, shapes leave it out."""

    def __init__(self, kit, consts: CachedConsts):
        self._kit, self._consts = kit, consts

    def sum(self, t):
        return self._kit.reduce(t, mean=False)

    def mean(self, t):
        return self._kit.reduce(t, mean=True)

    def weighted_sum(self, w, t):
        return self._kit.reduce(w * t, mean=False)

    def shape(self, t):
        return tuple(int(s) for s in t.shape[1:])

    def const(self, arr, like):
        return self._consts.const(arr, like)  # unbatched: broadcasts over the batch

    def non_differentiable(self, outs):
        return self._consts.non_differentiable(outs)  # dtypes and autograd flags: no shapes

    def dense(self, x, w, b):
        # x (B, ..., d) @ w (B|1, d, e) + b (B|1, e): the batch dimension of w and b must line up
        # with x's first, not with its middle dimensions.
        kit = self._kit
        middle = len(x.shape) - 2
        if middle == 0:
            return kit.matmul(x[:, None, :], w)[:, 0, :] + b
        w = kit.reshape(
            w, (int(w.shape[0]),) + (1,) * (middle - 1) + tuple(int(s) for s in w.shape[1:])
        )
        b = kit.reshape(b, (int(b.shape[0]),) + (1,) * middle + (int(b.shape[-1]),))
        return kit.matmul(x, w) + b


class Evaluator:
    def __init__(self, kit, graph, built):
        self.kit, self.graph, self.built = kit, graph, built
        self.F = CachedConsts(kit.F, kit)
        self.FB = BatchedF(kit, self.F)
        self.values = {leaf.name: leaf_array(leaf.values) for leaf in graph.leaves}
        with kit.scope():
            self.base = {n: kit.tensor(v) for n, v in self.values.items()}
            self.params = {n: kit.param(built, n) for n in built.param_names()}
        self.versions = {n: kit.version(t) for n, t in self.base.items()}
        self.fresh_inputs = False  # the op changes its inputs in place: new copies every time
        self.batch_ok: dict[str, bool] = {}
        self.dims = {int(s) for v in self.values.values() for s in np.shape(v)}
        self._buffers: dict = {}  # (shape, dtype) -> the last moved tensor, reused (_moved)
        self.repeats_bitwise = False  # set by numeric._repeatable: UnmovedCalls may be used
        self._calls: tuple | None = None  # (intermediate, its UnmovedCalls)

    def pm_losses(
        self,
        name: str,
        dirs: np.ndarray,
        scales: np.ndarray,
        base: np.ndarray,
        deadline: float = float("inf"),
        now=time.perf_counter,
    ):
        """The loss with `name` moved by +scales[i]*dirs[i] and by -scales[i]*dirs[i], for every
        i. Returns (plus, minus), float64 numpy arrays. `base` is the tensor's value (for the
        probe)."""
        k = dirs.shape[0]
        size = max(1, int(np.prod(dirs.shape[1:])))
        half = min(k, CHUNK // (2 * size))
        with self.kit.scope():
            if half >= 2 and name not in self.params and self.batches(name, base):
                try:
                    return self._in_batches(name, dirs, scales, half)
                except BatchRefused:
                    self.batch_ok[name] = False
            plus, minus = np.empty(k), np.empty(k)
            calls = self._unmoved_calls(name)
            try:
                for i in range(k):
                    if now() > deadline:
                        raise BudgetUsed(name)
                    step, scale = self.kit.step(dirs[i], float(scales[i]))
                    plus[i] = self._one(name, step, scale, calls)
                    minus[i] = self._one(name, step, -scale, calls)
            finally:
                if name in self.params:
                    self.kit.assign(self.built, name, self.params[name])
            return plus, minus

    def _unmoved_calls(self, name: str) -> UnmovedCalls | None:
        """The op's calls while intermediate `name` is perturbed, chunk after chunk of its
        directions; None for a leaf or parameter (the op gets a moved tensor every time)."""
        if not self.repeats_bitwise or name in self.base or name in self.params:
            return None
        if self._calls is None or self._calls[0] != name:  # one tensor's at a time
            self._calls = (name, UnmovedCalls(self.built.call_op, self.kit.version))
        return self._calls[1]

    def base_loss(self) -> tuple[float, list[str], dict]:
        """The loss at the unmoved point, the dtype names of the op's outputs there, and the
        values of the graph's outputs ({name: float64 numpy, flat})."""
        dtypes: list[str] = []
        seen: dict = {}

        def call_op(args, kwargs):
            outs = self.built.call_op(args, kwargs)
            dtypes.extend(dtype_name(o) for o in outs)
            return outs

        with self.kit.scope():
            loss = self._forward(self._leaves(), None, self.F, call_op, seen=seen)
            self._inputs_unchanged()
            outs = {n: self.kit.numbers(t) for n, t in seen.items()}
            return float(self.kit.numbers(loss)[0]), dtypes, outs

    # --- one perturbation at a time --------------------------------------------------------------
    def _leaves(self) -> dict:
        if self.fresh_inputs:
            return {n: self.kit.tensor(v) for n, v in self.values.items()}
        return dict(self.base)

    def _one(self, name, delta, scale, calls: UnmovedCalls | None = None) -> float:
        """The loss with `name` moved by scale * delta (one pass: no scaled copy of delta)."""
        leaves, inject = self._leaves(), None
        if name in leaves:
            leaves[name] = self._moved(name, leaves[name], delta, scale)
        elif name in self.params:
            self.kit.assign(self.built, name, self._moved(name, self.params[name], delta, scale))
        else:
            inject = (name, delta, scale)
        call_op = calls.forward() if calls is not None else self.built.call_op
        loss = self._forward(leaves, inject, self.F, call_op, self._moved)
        self._inputs_unchanged()
        return float(self.kit.numbers(loss)[0])

    def _moved(self, name, t, delta, scale):
        """t + scale * delta, into the buffer an earlier forward's moved tensor of that shape and
        dtype used, where the kit can (torch: a fresh 8 MB tensor per forward of a 10^6-element
        tensor was fresh memory to touch each time). One forward moves one tensor, and the
        forward before it is over, its loss read; so the tensors of one shape share a buffer."""
        key = (tuple(t.shape), str(t.dtype))
        moved = self.kit.axpy(t, delta, scale, out=self._buffers.get(key))
        self._buffers[key] = moved
        return moved

    def _forward(self, leaves, inject, F, call_op, moved=None, seen=None):
        def rec(n, t, role):
            if seen is not None and role == "output":
                seen[n] = t
            if inject is None or n != inject[0]:
                return t
            if moved is not None:
                return moved(n, t, inject[1], inject[2])
            return self.kit.axpy(t, inject[1], inject[2])

        return self.graph.forward(leaves, call_op, rec, F)

    def _inputs_unchanged(self) -> bool:
        """An op that writes into its inputs would change every later forward: from the first
        sign of it, each forward gets new copies of the leaves (as before this module)."""
        if all(self.kit.version(t) == self.versions[n] for n, t in self.base.items()):
            return True
        self.base = {n: self.kit.tensor(v) for n, v in self.values.items()}
        self.versions = {n: self.kit.version(t) for n, t in self.base.items()}
        self.fresh_inputs = True
        return False

    # --- many perturbations in one forward ---------------------------------------------------------
    def _in_batches(self, name, dirs, scales, half):
        k = dirs.shape[0]
        plus, minus = np.empty(k), np.empty(k)
        for i0 in range(0, k, half):
            rows = dirs[i0 : i0 + half] * scales[i0 : i0 + half].reshape(
                (-1,) + (1,) * (dirs.ndim - 1)
            )
            n = rows.shape[0]
            got = self._batched(name, self.kit.tensor(np.concatenate([rows, -rows]), copy=False))
            plus[i0 : i0 + n], minus[i0 : i0 + n] = got[:n], got[n:]
        return plus, minus

    def _batched(self, name, rows) -> np.ndarray:
        n = int(rows.shape[0])
        if self.fresh_inputs:
            raise BatchRefused("the op changes its inputs in place")
        leaves = {k: t[None] for k, t in self.base.items()}
        inject = None
        if name in leaves:
            leaves[name] = leaves[name] + rows
        else:
            inject = (name, rows, 1.0)

        def call_op(args, kwargs):
            outs = self.built.call_op(args, kwargs)
            for o in outs:
                if len(o.shape) == 0 or int(o.shape[0]) not in (1, n):
                    raise BatchRefused(
                        f"an output of shape {tuple(o.shape)} has no batch dimension"
                    )
            return outs

        try:
            loss = self._forward(leaves, inject, self.FB, call_op)
        except BatchRefused:
            raise
        except USER_FAILURES as exc:  # no batch: one at a time
            raise BatchRefused(f"{type(exc).__name__}: {exc}") from exc
        if not self._inputs_unchanged():
            raise BatchRefused("the op changes its inputs in place")
        out = self.kit.numbers(loss)
        if out.size == 1:
            out = np.repeat(out, n)
        if out.size != n:
            raise BatchRefused(f"{out.size} losses for a batch of {n}")
        return out

    def batches(self, name, base) -> bool:
        """Whether perturbations of `name` may run as one batched forward (probed once)."""
        if name in self.params:
            return False
        if name not in self.batch_ok:
            try:
                self.batch_ok[name] = self._probe(name, np.asarray(base, dtype=np.float64))
            except USER_FAILURES:  # noqa: BLE001 - far-off probe values may fail
                self.batch_ok[name] = False
        return self.batch_ok[name]

    def _probe(self, name, base) -> bool:
        """The batched forward must give each row the loss that row gives alone, with rows far
        apart (the values reversed, then noise), so an op that mixes rows shows it."""
        size = 3
        while size in self.dims or size in base.shape:
            size += 1
        rng = rng_for(0, "probe:" + name)
        rows = np.zeros((size,) + base.shape)
        rows[1] = base.reshape(-1)[::-1].reshape(base.shape) - base
        for j in range(2, size):
            rows[j] = 0.1 * j * (np.abs(base) + 1.0) * rng.standard_normal(base.shape)
        t = self.kit.tensor(rows, copy=False)
        alone = np.array([self._one(name, t[j], 1.0) for j in range(size)])
        together = self._batched(name, t)
        if not (np.all(np.isfinite(alone)) and np.all(np.isfinite(together))):
            return False
        scale = np.max(np.abs(alone)) + np.max(np.abs(alone - alone[0]))
        return (
            bool(np.all(np.abs(together - alone) <= PROBE_RTOL * scale)) and not self.fresh_inputs
        )


class ViaEvaluate:
    """For an adapter with no numeric_kit, only `evaluate(graph, built, leaves, inject, device)`
    (numpy in, float out): one forward per perturbation, leaves rebuilt each time."""

    repeats_bitwise = False  # numeric._repeatable sets it; no calls of its own to reuse

    def __init__(self, ad, graph, built, device):
        self.ad, self.graph, self.built, self.device = ad, graph, built, device
        self.values = {leaf.name: leaf_array(leaf.values) for leaf in graph.leaves}
        self.params = {
            n: np.asarray(built.get_param(n), dtype=np.float64) for n in built.param_names()
        }

    def batches(self, name, base) -> bool:
        return False

    def base_loss(self) -> tuple[float, list[str], dict]:
        return float(self.ad.evaluate(self.graph, self.built, self.values, {}, self.device)), [], {}

    def pm_losses(self, name, dirs, scales, base, deadline=float("inf"), now=time.perf_counter):
        k = dirs.shape[0]
        plus, minus = np.empty(k), np.empty(k)
        for i in range(k):
            if now() > deadline:
                raise BudgetUsed(name)
            delta = scales[i] * dirs[i]
            plus[i], minus[i] = self._loss(name, delta), self._loss(name, -delta)
        return plus, minus

    def _loss(self, name, delta) -> float:
        if name in self.values:
            leaves = {**self.values, name: self.values[name] + delta}
            return float(self.ad.evaluate(self.graph, self.built, leaves, {}, self.device))
        if name in self.params:
            self.built.set_param(name, self.params[name] + delta)
            try:
                return float(self.ad.evaluate(self.graph, self.built, self.values, {}, self.device))
            finally:
                self.built.set_param(name, self.params[name])
        return float(
            self.ad.evaluate(self.graph, self.built, self.values, {name: delta}, self.device)
        )
