"""Central finite differences of the graph's loss, in float64, at bounded cost.

Every tensor is perturbed where it lives: a leaf's values, a parameter's values, or an
intermediate through an additive injection in the forward (numeric_eval does the forwards,
inside the framework and in batches where the op allows it). Small tensors get every element;
large ones get random-direction projections (g . v), compared against each mode's g . v.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from gradviz.backends.graphs import differentiable, rng_for
from gradviz.backends.numeric_dirs import expand, signs
from gradviz.backends.numeric_eval import CHUNK, BudgetUsed, Evaluator, ViaEvaluate
from gradviz.compare.metrics import close_mask, tolerances
from gradviz.errors import GradvizError
from gradviz.model import FROZEN, NumericInfo

FULL_MAX = 256  # elements: above this, random-direction projections
DIRECTIONS = 16
REL_EPS = 1e-6
TIME_BUDGET_S = 30.0  # per op: tensors left when it runs out are reported as skipped
REPEAT_RTOL = 1e-12  # two forwards at the same point must agree this closely (float64)


_LOW_FLOATS = ("float32", "float16", "bfloat16", "half")


class NumericLowPrecision(GradvizError, RuntimeError):
    """The forward computes in less than float64 whatever its inputs are."""


class ForwardDependsOnDtype(GradvizError, RuntimeError):
    """The forward in float64 computes another function than in the run's dtype."""


class ForwardNotRepeatable(GradvizError, RuntimeError):
    """The forward gave different losses at the same inputs: finite differences of it are noise."""


def compute(ad, graph, built, device, tensors: dict) -> dict:
    """The numeric reference of every float tensor."""
    kit = getattr(ad, "numeric_kit", None)
    ev = Evaluator(kit(device), graph, built) if kit else ViaEvaluate(ad, graph, built, device)
    _repeatable(ev, tensors)
    batched = _batched(ad, graph, built, device, ev.values, tensors)
    out, t0 = {}, time.perf_counter()
    first = [n for n in getattr(graph, "numeric_first", ()) if n in tensors]
    for name in first + [n for n in tensors if n not in first]:
        t = tensors[name]
        if not differentiable(t["value"]):
            continue  # int64 / bool inputs: no gradient, nothing to perturb
        if t.get("frozen"):
            out[name] = {"grad": None, "why": FROZEN_NUMERIC, "info": NumericInfo("skipped")}
            continue
        through = _through_other_outputs(name, t, graph)
        if through:
            out[name] = {"grad": None, "why": through, "info": NumericInfo("skipped")}
            continue
        if time.perf_counter() - t0 > TIME_BUDGET_S:
            out[name] = _skipped()
            continue
        base = ev.values.get(name)
        if base is None:
            base = (
                built.get_param(name)
                if name in ev.params
                else np.asarray(t["value"], dtype=np.float64)
            )
        if base.size <= FULL_MAX:
            out[name] = _full(name, base, ev, batched, deadline=t0 + TIME_BUDGET_S)
        else:
            out[name] = _projected(name, base, ev, t["grads"])
    return out


FROZEN_NUMERIC = (
    f"{FROZEN}: a frozen parameter keeps the value the module built; the numeric "
    "reference does not perturb it"
)


def _through_other_outputs(name: str, t: dict, graph) -> str:
    """Why an output of the op has no numeric reference, or "": other outputs are computed from
    it inside the op (a forward returning y and z = f(y)). Its gradient then includes the paths
    through them (autograd's answer: more than its weight in the loss, the only other reader
    of an op graph's output), and a perturbation added to it after the op returned cannot move
    them: numeric would hold them fixed and contradict a right gradient. The inputs' numeric
    gradients go through the op and include those paths."""
    weight = getattr(graph, "loss_weights", {}).get(name)
    grads = t.get("grads", {})
    g = grads.get("custom", grads.get("default"))
    if weight is None or g is None or np.size(g) != np.size(weight):
        return ""
    g64 = np.asarray(g, dtype=np.float64).reshape(-1)
    w64 = np.asarray(weight, dtype=np.float64).reshape(-1)
    off = int(np.count_nonzero(~close_mask(g64, w64, tolerances(str(np.asarray(g).dtype)))))
    if not off:
        return ""
    others = ", ".join(n for n in graph.loss_weights if n != name) or "another output"
    return (
        f"no numeric reference for {name}: other outputs of the op ({others}) are computed "
        f"from it inside the op, so its gradient includes the paths through them (at {off} "
        f"of {g64.size} elements it is more than {name}'s own weight in the loss), and a "
        f"perturbation added to {name} after the op returned cannot move them; the inputs' "
        "numeric gradients include those paths"
    )


def _repeatable(ev, tensors: dict) -> None:
    """A forward with random ops (Dropout in training, tf.random / torch.rand) gives another loss
    at every call: its finite differences are noise of size 1/eps (a correct layer read
    `differs` with errors of 1e7). Two forwards at the unmoved point must agree; else there is
    no numeric reference, and the error says why. So too for a forward whose output stays below
    float64 (a dtype policy, a cast inside), where a 1e-6 step is lost in rounding."""
    (first, dtypes, outs), (second, _, again) = ev.base_loss(), ev.base_loss()
    if abs(first - second) > REPEAT_RTOL * (abs(first) + abs(second)) or np.isfinite(
        first
    ) != np.isfinite(second):
        raise ForwardNotRepeatable(
            f"the forward is not repeatable: two calls at the same inputs gave losses {first:.6g} "
            f"and {second:.6g} (a random op such as Dropout in training mode, tf.random or "
            "torch.rand), so finite differences of it are noise and there is no numeric "
            "reference; fix the randomness (training=False, or a seeded, stateless random op) "
            "to check the gradient numerically"
        )
    low = sorted({d for d in dtypes if d in _LOW_FLOATS})
    # 16-bit floats resolve 1e-3 at best: a 1e-6 step is always lost (the numeric gradient read
    # 0). A float32 output is noise only where its values move under the step (x * w is; a
    # larq sign quantizer built in call, whose ±1 is exact, is not): a probe tells.
    if low and (low != ["float32"] or _rounding_noise(ev)):
        raise NumericLowPrecision(
            f"the op's output is {' and '.join(low)} when its inputs are float64 (a dtype policy "
            "such as mixed_bfloat16, or a cast inside the forward), so finite differences of it "
            "are rounding noise and there is no numeric reference; custom is compared with "
            "default only"
        )
    _same_forward(outs, tensors)
    # the same bits twice: an op's call at the unmoved point may be reused (numeric_calls.py)
    ev.repeats_bitwise = (
        first == second
        and outs.keys() == again.keys()
        and all(_same_bits(outs[n], again[n]) for n in outs)
    )


def _same_forward(outs: dict, tensors: dict) -> None:
    """The float64 forward must be the run's forward: at the same inputs its outputs must agree
    with the run's (custom) outputs up to the run dtype's rounding. A random draw that depends on
    the dtype (tf.random.stateless_uniform(..., dtype=x.dtype): other numbers in float64) made
    the numeric reference the derivative of another function, and a correct op `differs` (GV301
    "looks like a bug"). More than half the elements apart is another function, not a kink or a
    rounding."""
    for name, got in outs.items():
        ref = tensors.get(name, {}).get("value")
        if (
            ref is None
            or not differentiable(ref)
            or np.size(ref) != np.size(got)
            or not np.size(got)
        ):
            continue
        # float32 as it is and in place: a 10^6-element output took four 8 MB temporaries (the
        # same numbers: float32 -> float64 is exact)
        ref = np.asarray(ref).reshape(-1)
        if ref.dtype not in (np.float32, np.float64):
            ref = ref.astype(np.float64)
        size = np.abs(ref)
        scale = float(np.max(size, where=np.isfinite(size), initial=0.0)) + 1e-30
        gap = np.subtract(got, ref, dtype=np.float64)
        np.abs(gap, out=gap)
        apart = np.count_nonzero(gap > 1e-3 * scale)
        if apart * 2 > ref.size:
            raise ForwardDependsOnDtype(
                f"the forward in float64 is not the run's forward: at the same inputs its output "
                f"'{name}' differs from the run's at {apart} of {ref.size} "
                f"elements (max {np.max(gap):.3g}), as a random draw that depends "
                "on the dtype does (tf.random.stateless_uniform(..., dtype=x.dtype)); finite "
                "differences of it are no reference for this op, so custom is compared with "
                "default only"
            )


def _rounding_noise(ev) -> bool:
    """Whether central differences along one random direction of the first float input, with
    steps h and 2h, disagree: a smooth float64 loss gives the same slope to ~1e-12, a rounded one
    slopes of noise ~ulp/h that differ, a piecewise-constant one 0 twice."""
    name = next((n for n, b in ev.values.items() if differentiable(b) and np.size(b)), None)
    if name is None:
        return False
    base = ev.values[name]
    base = np.asarray(base, dtype=np.float64)
    v = rng_for(0, "rounding:" + name).standard_normal((1,) + base.shape)
    v /= np.sqrt(np.sum(v * v))
    h = REL_EPS * max(1.0, float(np.sqrt(np.mean(np.square(base)))))
    plus, minus = ev.pm_losses(name, np.concatenate([v, v]), np.array([h, 2 * h]), base)
    d1, d2 = (plus[0] - minus[0]) / (2 * h), (plus[1] - minus[1]) / (4 * h)
    if not (np.isfinite(d1) and np.isfinite(d2)):
        return True
    return abs(d1 - d2) > 1e-3 * (abs(d1) + abs(d2)) + 1e-12


def _batched(ad, graph, built, device, base_leaves, tensors):
    """The adapter's compiled evaluator for ops that take no batch dimension, or None."""
    make = getattr(ad, "batch_evaluator", None)
    if make is None:
        return None
    shapes = {
        n: tuple(np.shape(t["value"]))
        for n, t in tensors.items()
        if np.size(t["value"]) <= FULL_MAX and differentiable(t["value"])
    }
    if not shapes:
        return None
    try:
        return {"losses": make(graph, built, device, base_leaves, shapes), "names": set(shapes)}
    except Exception:  # noqa: BLE001 - fall back to one perturbation at a time
        return None


def _skipped() -> dict:
    return {
        "grad": None,
        "why": f"skipped: numeric time budget ({TIME_BUDGET_S:g} s) used up",
        "info": NumericInfo("skipped"),
    }


def _full(name, base, ev, batched=None, deadline=float("inf")) -> dict:
    flat = base.reshape(-1)
    steps = REL_EPS * np.maximum(1.0, np.abs(flat))
    dirs = np.eye(flat.size).reshape((flat.size,) + base.shape)
    grad = None
    if batched is not None and name in batched["names"] and not ev.batches(name, base):
        deltas = np.diag(steps).reshape((flat.size,) + base.shape)
        try:
            losses = batched["losses"](name, np.concatenate([deltas, -deltas]))
            grad = (losses[: flat.size] - losses[flat.size :]) / (2 * steps)
        except Exception:  # noqa: BLE001 - the forward cannot run compiled: go one by one
            batched["names"].clear()
    if grad is None:
        # a deep graph's forward is slow, so the budget holds inside a tensor too
        try:
            plus, minus = ev.pm_losses(
                name, dirs, steps, base, deadline=deadline, now=lambda: time.perf_counter()
            )
        except BudgetUsed:
            return _skipped()
        grad = (plus - minus) / (2 * steps)
    return {"grad": grad.reshape(base.shape), "why": "", "info": NumericInfo("full", eps=REL_EPS)}


def _projected(name, base, ev, grads: dict) -> dict:
    finite = np.isfinite(base)
    values = base.reshape(-1) if finite.all() else base[finite]  # the same numbers, no copy
    eps = REL_EPS * max(1.0, float(np.sqrt(np.mean(np.square(values)))) if values.size else 1.0)
    numeric = np.empty(DIRECTIONS)
    flat_grads, twins = _distinct(grads)
    dots = {mode: np.empty(DIRECTIONS) for mode in grads}
    per = max(1, min(DIRECTIONS, CHUNK // base.size))  # directions drawn at once: bounded memory
    chunks = [(k0, min(per, DIRECTIONS - k0)) for k0 in range(0, DIRECTIONS, per)]
    directions = _Directions(name, base.shape, per)

    def draw(k0, k):
        # v / |v| is the direction; the norm goes into the step and the dots instead of a pass
        # over v (same directions, rounding aside). einsum, not BLAS: BLAS threads spin on a
        # busy machine.
        v, norms = directions.chunk(k0, k)
        rows = v.reshape(k, -1)
        return (
            v,
            norms,
            {mode: np.einsum("ij,j->i", rows, g) / norms for mode, g in flat_grads.items()},
        )

    # The next direction and its dots are made in a thread (numpy lets go of the GIL) while the
    # forwards of this one run.
    with ThreadPoolExecutor(1) as pool:
        ahead = pool.submit(draw, *chunks[0])
        for i, (k0, k) in enumerate(chunks):
            v, norms, chunk_dots = ahead.result()
            if i + 1 < len(chunks):
                ahead = pool.submit(draw, *chunks[i + 1])
            for mode in dots:
                dots[mode][k0 : k0 + k] = chunk_dots[twins.get(mode, mode)]
            plus, minus = ev.pm_losses(name, v, eps / norms, base)
            numeric[k0 : k0 + k] = (plus - minus) / (2 * eps)
    why = (
        f"{base.size} elements: checked along {DIRECTIONS} random directions instead of per element"
    )
    return {
        "grad": None,
        "why": why,
        "info": NumericInfo(
            "projection", eps=eps, directions=DIRECTIONS, projections={"numeric": numeric, **dots}
        ),
    }


def _distinct(grads: dict) -> tuple[dict, dict]:
    """The modes' gradients as flat float64 for the dots, once for modes whose gradients are the
    same bits (a custom backward computing what autograd does): their dots are the same numbers,
    made once. Returns ({mode: flat float64}, {mode: the mode whose dots it takes})."""
    kept: dict = {}
    twins: dict = {}
    for mode, g in grads.items():
        g = np.asarray(g)
        twin = next((m for m, h in kept.items() if _same_bits(h, g)), None)
        if twin is None:
            kept[mode] = g
        else:
            twins[mode] = twin
    flat = {mode: np.asarray(g, dtype=np.float64).reshape(-1) for mode, g in kept.items()}
    return flat, twins


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype or a.dtype.kind != "f":
        return False
    bits = f"u{a.dtype.itemsize}"
    return bool(np.array_equal(a.view(bits), b.view(bits)))


class _Directions:
    """The directions of one tensor, chunk by chunk and in order (numeric_dirs: seeded ±1 signs),
    expanded to int8 into two buffers reused in turn (the forwards of one chunk run while the next
    is expanded into the other); the framework's step casts them to float64."""

    def __init__(self, name: str, shape: tuple, per: int):
        self.shape, self.per = tuple(shape), per
        self.bits = signs(name, self.shape, DIRECTIONS)
        self.norm = float(np.sqrt(max(1, int(np.prod(self.shape)))))
        self.buffers: list[np.ndarray] = []
        self.turn = 0

    def chunk(self, k0: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        if len(self.buffers) < 2:
            self.buffers.append(np.empty((self.per,) + self.shape, np.int8))
        out = self.buffers[self.turn % 2][:k]
        self.turn += 1
        for j in range(k):
            expand(self.bits[k0 + j], out[j])
        return out, np.full(k, self.norm)
