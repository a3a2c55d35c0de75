"""The random directions of the numeric reference's projections: Rademacher signs (±1).

The projections compare, direction by direction, each mode's g . v / |v| with the numeric
directional derivative along v / |v| (compare/numeric_metrics.py); no estimator averages over
directions, so any seeded direction of full support does, and ±1 in every element leaves no
element with a small weight (a Gaussian's near-0 entries). A tensor's directions depend only on
its name and shape (`seeds.rng_for(0, "numeric:" + name)`), not on the run's seed, the op or the
framework: torch and TF draw the same. Direction k is ceil(n / 64) raw 64-bit outputs of that
stream's bit generator (PCG64), bit i (little-endian) read as -1 where set and +1 where not; its
norm is sqrt(n). Drawing them is ~5 ms per 10^6-element tensor (a Gaussian's standard_normal was
~10 ns per element, ~28 ns into fresh memory: most of a cold 10^6 numeric pass). The numeric pass
expands each direction to int8 ±1 (1 MB per 10^6 elements, ~0.1 ms) into a buffer it reuses: the
dots read it for each mode (int8 at an eighth of float64's memory traffic, the same products) and
the framework's step makes its float64 copy of it, so no fresh memory is faulted in per direction
and nothing needs keeping between runs.
"""

from __future__ import annotations

import numpy as np

from gradviz.seeds import rng_for


def signs(name: str, shape: tuple, count: int) -> np.ndarray:
    """The sign bits of a tensor's `count` directions, packed: row k is direction k's."""
    words = -(-max(1, int(np.prod(shape))) // 64)
    raw = rng_for(0, "numeric:" + name).bit_generator.random_raw(count * words)
    return raw.astype("<u8").view(np.uint8).reshape(count, words * 8)


def expand(row: np.ndarray, out: np.ndarray) -> np.ndarray:
    """One direction's ±1 (a set bit: -1) into `out` (int8 or float, C-contiguous, the tensor's
    shape): in int8, -bit | 1, then cast where `out` is float."""
    flat = out.reshape(-1)
    bits = np.unpackbits(row, count=flat.size, bitorder="little").view(np.int8)
    ones = flat if flat.dtype == np.int8 else bits
    np.negative(bits, out=ones)  # a set bit: -1 (all bits set), else 0
    np.bitwise_or(ones, 1, out=ones)  # -1 | 1 is -1, 0 | 1 is 1
    if ones is not flat:
        np.copyto(flat, ones)
    return out


def rademacher(name: str, shape: tuple, count: int) -> np.ndarray:
    """All `count` directions of a tensor at once, (count,) + shape float64 (for tests and tools)."""
    bits = signs(name, shape, count)
    out = np.empty((count,) + tuple(shape))
    for k in range(count):
        expand(bits[k], out[k])
    return out
