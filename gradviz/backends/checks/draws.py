"""The checks' fixed draws (upstreams, directions, further samples): seeded numbers, the same at
every call, drawn once per worker. Making a seeded numpy Generator costs more than drawing a few
hundred numbers from it, and a run of the six checks made ~30 of them (a tenth of a small torch
op's checks). Each call gets its own copy: torch.as_tensor shares a float64 array, and a
backward may write into its upstream."""

from __future__ import annotations

import numpy as np

_KEPT: dict[tuple, np.ndarray] = {}
KEPT_MAX = 64  # draws, each of at most KEPT_SIZE elements; larger ones are drawn at each call
KEPT_SIZE = 1 << 16


def normal(seed: tuple[int, ...], shape) -> np.ndarray:
    """np.random.default_rng(seed).standard_normal(shape)."""
    return _drawn(("normal", tuple(seed), tuple(shape)))


def uniform(seed: tuple[int, ...], lo: float, hi: float, shape) -> np.ndarray:
    """np.random.default_rng(seed).uniform(lo, hi, size=shape)."""
    return _drawn(("uniform", tuple(seed), tuple(shape), float(lo), float(hi)))


def _drawn(key: tuple) -> np.ndarray:
    kept = _KEPT.get(key)
    if kept is None:
        rng = np.random.default_rng(list(key[1]))
        kept = rng.standard_normal(key[2]) if key[0] == "normal" else rng.uniform(*key[3:], key[2])
        if kept.size > KEPT_SIZE:
            return kept
        if len(_KEPT) >= KEPT_MAX:
            _KEPT.clear()
        _KEPT[key] = kept
    return kept.copy()
