"""Central finite differences of the graph's loss, in float64, at bounded cost.

Every tensor is perturbed where it lives: a leaf's values, a parameter's values, or an
intermediate through an additive injection in the forward. Small tensors get every element;
large ones get random-direction projections (g . v), compared against each mode's g . v.
"""
from __future__ import annotations

import time

import numpy as np

from gradviz.backends.graphs import rng_for
from gradviz.model import NumericInfo

FULL_MAX = 256          # elements: above this, random-direction projections
DIRECTIONS = 16
REL_EPS = 1e-6
TIME_BUDGET_S = 30.0    # per op: tensors left when it runs out are reported as skipped


def compute(ad, graph, built, device, tensors: dict) -> dict:
    base_leaves = {leaf.name: np.asarray(leaf.values, dtype=np.float64) for leaf in graph.leaves}
    params = list(built.param_names())
    base_params = {n: np.asarray(built.get_param(n), dtype=np.float64) for n in params}

    def evaluate(leaves, inject=None) -> float:
        return float(ad.evaluate(graph, built, leaves, inject or {}, device))

    def loss_with(name: str, delta: np.ndarray) -> float:
        if name in base_leaves:
            return evaluate({**base_leaves, name: base_leaves[name] + delta})
        if name in base_params:
            built.set_param(name, base_params[name] + delta)
            try:
                return evaluate(base_leaves)
            finally:
                built.set_param(name, base_params[name])
        return evaluate(base_leaves, {name: delta})

    batched = _batched(ad, graph, built, device, base_leaves, base_params, tensors)
    out, t0 = {}, time.perf_counter()
    first = [n for n in getattr(graph, "numeric_first", ()) if n in tensors]
    for name in first + [n for n in tensors if n not in first]:
        t = tensors[name]
        if time.perf_counter() - t0 > TIME_BUDGET_S:
            out[name] = _skipped()
            continue
        base = base_leaves.get(name, base_params.get(name))
        if base is None:
            base = np.asarray(t["value"], dtype=np.float64)
        if base.size <= FULL_MAX:
            out[name] = _full(name, base, loss_with, batched, deadline=t0 + TIME_BUDGET_S)
        else:
            out[name] = _projected(name, base, loss_with, t["grads"])
    return out


def _batched(ad, graph, built, device, base_leaves, base_params, tensors):
    """The adapter's one-call evaluator for many perturbations, or None (torch: eager is fast)."""
    make = getattr(ad, "batch_evaluator", None)
    if make is None:
        return None
    shapes = {n: tuple(np.shape(t["value"])) for n, t in tensors.items()
              if np.size(t["value"]) <= FULL_MAX}
    if not shapes:
        return None
    try:
        return {"losses": make(graph, built, device, base_leaves, shapes), "names": set(shapes)}
    except Exception:  # noqa: BLE001 - fall back to one perturbation at a time
        return None


def _skipped() -> dict:
    return {"grad": None, "why": f"skipped: numeric time budget ({TIME_BUDGET_S:g} s) used up",
            "info": NumericInfo("skipped")}


def _full(name, base, loss_with, batched=None, deadline=float("inf")) -> dict:
    flat = base.reshape(-1)
    steps = REL_EPS * np.maximum(1.0, np.abs(flat))
    deltas = np.diag(steps).reshape((flat.size,) + base.shape)
    grad = None
    if batched is not None and name in batched["names"]:
        try:
            losses = batched["losses"](name, np.concatenate([deltas, -deltas]))
            grad = (losses[:flat.size] - losses[flat.size:]) / (2 * steps)
        except Exception:  # noqa: BLE001 - the forward cannot run compiled: go one by one
            batched["names"].clear()
    if grad is None:
        # one element at a time: a deep graph's forward is slow, so the budget holds inside a tensor
        grad = np.empty(flat.size)
        for k, (d, s) in enumerate(zip(deltas, steps)):
            if time.perf_counter() > deadline:
                return _skipped()
            grad[k] = (loss_with(name, d) - loss_with(name, -d)) / (2 * s)
    return {"grad": grad.reshape(base.shape), "why": "",
            "info": NumericInfo("full", eps=REL_EPS)}


def _projected(name, base, loss_with, grads: dict) -> dict:
    rng = rng_for(0, "numeric:" + name)
    eps = REL_EPS * max(1.0, float(np.sqrt(np.mean(np.square(base[np.isfinite(base)])))) if
                        np.isfinite(base).any() else 1.0)
    numeric = np.empty(DIRECTIONS)
    dots = {mode: np.empty(DIRECTIONS) for mode in grads}
    for k in range(DIRECTIONS):
        v = rng.standard_normal(base.shape)
        v /= np.linalg.norm(v)
        numeric[k] = (loss_with(name, eps * v) - loss_with(name, -eps * v)) / (2 * eps)
        for mode, g in grads.items():
            dots[mode][k] = float(np.sum(np.asarray(g, dtype=np.float64) * v))
    why = (f"{base.size} elements: checked along {DIRECTIONS} random directions instead of "
           "per element")
    return {"grad": None, "why": why,
            "info": NumericInfo("projection", eps=eps, directions=DIRECTIONS,
                                projections={"numeric": numeric, **dots})}
