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
from gradviz.backends.numeric_eval import CHUNK, BudgetUsed, Evaluator, ViaEvaluate
from gradviz.model import NumericInfo

FULL_MAX = 256          # elements: above this, random-direction projections
DIRECTIONS = 16
REL_EPS = 1e-6
TIME_BUDGET_S = 30.0    # per op: tensors left when it runs out are reported as skipped


def compute(ad, graph, built, device, tensors: dict) -> dict:
    kit = getattr(ad, "numeric_kit", None)
    ev = Evaluator(kit(device), graph, built) if kit else ViaEvaluate(ad, graph, built, device)
    batched = _batched(ad, graph, built, device, ev.values, tensors)
    out, t0 = {}, time.perf_counter()
    first = [n for n in getattr(graph, "numeric_first", ()) if n in tensors]
    for name in first + [n for n in tensors if n not in first]:
        t = tensors[name]
        if not differentiable(t["value"]):
            continue   # int64 / bool inputs: no gradient, nothing to perturb
        if time.perf_counter() - t0 > TIME_BUDGET_S:
            out[name] = _skipped()
            continue
        base = ev.values.get(name)
        if base is None:
            base = built.get_param(name) if name in ev.params else \
                np.asarray(t["value"], dtype=np.float64)
        if base.size <= FULL_MAX:
            out[name] = _full(name, base, ev, batched, deadline=t0 + TIME_BUDGET_S)
        else:
            out[name] = _projected(name, base, ev, t["grads"])
    return out


def _batched(ad, graph, built, device, base_leaves, tensors):
    """The adapter's compiled evaluator for ops that take no batch dimension, or None."""
    make = getattr(ad, "batch_evaluator", None)
    if make is None:
        return None
    shapes = {n: tuple(np.shape(t["value"])) for n, t in tensors.items()
              if np.size(t["value"]) <= FULL_MAX and differentiable(t["value"])}
    if not shapes:
        return None
    try:
        return {"losses": make(graph, built, device, base_leaves, shapes), "names": set(shapes)}
    except Exception:  # noqa: BLE001 - fall back to one perturbation at a time
        return None


def _skipped() -> dict:
    return {"grad": None, "why": f"skipped: numeric time budget ({TIME_BUDGET_S:g} s) used up",
            "info": NumericInfo("skipped")}


def _full(name, base, ev, batched=None, deadline=float("inf")) -> dict:
    flat = base.reshape(-1)
    steps = REL_EPS * np.maximum(1.0, np.abs(flat))
    dirs = np.eye(flat.size).reshape((flat.size,) + base.shape)
    grad = None
    if batched is not None and name in batched["names"] and not ev.batches(name, base):
        deltas = np.diag(steps).reshape((flat.size,) + base.shape)
        try:
            losses = batched["losses"](name, np.concatenate([deltas, -deltas]))
            grad = (losses[:flat.size] - losses[flat.size:]) / (2 * steps)
        except Exception:  # noqa: BLE001 - the forward cannot run compiled: go one by one
            batched["names"].clear()
    if grad is None:
        # a deep graph's forward is slow, so the budget holds inside a tensor too
        try:
            plus, minus = ev.pm_losses(name, dirs, steps, base, deadline=deadline,
                                       now=lambda: time.perf_counter())
        except BudgetUsed:
            return _skipped()
        grad = (plus - minus) / (2 * steps)
    return {"grad": grad.reshape(base.shape), "why": "",
            "info": NumericInfo("full", eps=REL_EPS)}


def _projected(name, base, ev, grads: dict) -> dict:
    rng = rng_for(0, "numeric:" + name)
    eps = REL_EPS * max(1.0, float(np.sqrt(np.mean(np.square(base[np.isfinite(base)])))) if
                        np.isfinite(base).any() else 1.0)
    numeric = np.empty(DIRECTIONS)
    flat_grads = {mode: np.asarray(g, dtype=np.float64).reshape(-1) for mode, g in grads.items()}
    dots = {mode: np.empty(DIRECTIONS) for mode in grads}
    per = max(1, min(DIRECTIONS, CHUNK // base.size))   # directions drawn at once: bounded memory
    chunks = [(k0, min(per, DIRECTIONS - k0)) for k0 in range(0, DIRECTIONS, per)]

    def draw(k):
        # One draw of k directions is the same stream as k draws of one. v / |v| is the
        # direction; the norm goes into the step and the dots instead of a pass over v (same
        # directions, rounding aside). einsum, not BLAS: BLAS threads spin on a busy machine.
        v = rng.standard_normal((k,) + base.shape)
        rows = v.reshape(k, -1)
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
        return v, norms, {mode: np.einsum("ij,j->i", rows, g) / norms
                          for mode, g in flat_grads.items()}

    # The next directions are drawn in a thread (numpy lets go of the GIL) while the forwards of
    # these run: on a 10^6-element tensor drawing them costs about as much as the forwards.
    with ThreadPoolExecutor(1) as pool:
        ahead = pool.submit(draw, chunks[0][1])
        for i, (k0, k) in enumerate(chunks):
            v, norms, chunk_dots = ahead.result()
            if i + 1 < len(chunks):
                ahead = pool.submit(draw, chunks[i + 1][1])
            for mode, d in chunk_dots.items():
                dots[mode][k0:k0 + k] = d
            plus, minus = ev.pm_losses(name, v, eps / norms, base)
            numeric[k0:k0 + k] = (plus - minus) / (2 * eps)
    why = (f"{base.size} elements: checked along {DIRECTIONS} random directions instead of "
           "per element")
    return {"grad": None, "why": why,
            "info": NumericInfo("projection", eps=eps, directions=DIRECTIONS,
                                projections={"numeric": numeric, **dots})}
