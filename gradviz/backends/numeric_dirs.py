"""The random directions of the numeric reference's projections, kept between runs (bounded).

A tensor's directions depend only on its name and shape (`graphs.rng_for(0, "numeric:" + name)`),
not on the run's seed nor on the op, so a re-run draws exactly the same ones again. Drawing them
is the biggest part of the numeric pass of a big op: numpy's standard_normal costs ~10 ns per
element into memory already touched and ~28 ns into fresh memory (the VMs' free page reporting,
ARCHITECTURE.md), so ~0.5-1.3 s of CPU for the 16 directions of the three 10^6-element tensors of
one op, against ~0.2-0.5 s for its ~100 forwards. The worker keeps them: at most DIRS_MAX_BYTES
and an eighth of its memory limit (GRADVIZ_WORKER_MEMORY, which the parent enforces by killing
it), least recently used dropped first. The directions of a tensor too big for the bound are
drawn chunk by chunk into two buffers the pass reuses, and not kept.

Kept arrays are only read (directions and their norms); nothing hands them to user code.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional

import numpy as np

DIRS_MAX_BYTES = 512 << 20   # three 10^6-element tensors (16 directions each) take 384 MiB


@dataclass
class Drawn:
    """Every direction of one tensor, in drawing order, and the norm of each."""
    v: np.ndarray        # (directions,) + shape, float64
    norms: np.ndarray    # (directions,)

    @property
    def nbytes(self) -> int:
        return self.v.nbytes + self.norms.nbytes


def dirs_bound(memory_limit: int) -> int:
    """What a worker may keep of directions: an eighth of its memory limit, at most
    DIRS_MAX_BYTES (no limit: DIRS_MAX_BYTES)."""
    return min(DIRS_MAX_BYTES, memory_limit // 8) if memory_limit > 0 else DIRS_MAX_BYTES


class DirectionStore:
    def __init__(self, max_bytes: int = DIRS_MAX_BYTES):
        self.max_bytes = max_bytes
        self._kept: "OrderedDict[tuple, Drawn]" = OrderedDict()

    def fits(self, nbytes: int) -> bool:
        return nbytes <= self.max_bytes

    def get(self, name: str, shape: tuple) -> Optional[Drawn]:
        key = (name, tuple(shape))
        hit = self._kept.get(key)
        if hit is not None:
            self._kept.move_to_end(key)
        return hit

    def put(self, name: str, shape: tuple, drawn: Drawn) -> bool:
        """Keep `drawn`, dropping the least recently used to stay under the bound."""
        key = (name, tuple(shape))
        self._kept.pop(key, None)
        if not self.fits(drawn.nbytes):
            return False
        while self._kept and self.bytes() + drawn.nbytes > self.max_bytes:
            self._kept.popitem(last=False)
        self._kept[key] = drawn
        return True

    def bytes(self) -> int:
        return sum(d.nbytes for d in self._kept.values())

    def clear(self) -> None:
        self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)
