"""Numeric flags of `gradviz run` that cannot work, refused before any worker starts (exit 2):
a --shape whose tensors cannot fit in this machine's memory, a --timeout that is not a positive
finite number, a --seed numpy cannot take as it is (a non-finite --upstream const:K is refused
by model.parse_upstream, for the window and the settings file too)."""

from __future__ import annotations

import math
import os

SEED_MAX = 2**32 - 1  # numpy.random.default_rng takes any non-negative int; the
# workers hand seeds on as uint32, so larger ones would wrap
ITEMSIZE = {"float32": 4, "float64": 8}


def memory_bytes() -> int | None:
    """Physical memory of this machine, or None where the platform does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def problems(shape: tuple[int, ...], dtype: str, seed: int, timeout: float) -> list[str]:
    """What is wrong with these values, one message per flag (empty when all can run)."""
    out = []
    n = math.prod(shape)
    need = n * ITEMSIZE.get(dtype, 8)
    have = memory_bytes()
    if have is not None and need > have:
        out.append(
            f"--shape {'x'.join(map(str, shape))}: one tensor of {n:,} {dtype} values "
            f"needs {_gib(need)}, more than this machine's {_gib(have)} of memory"
        )
    if not (math.isfinite(timeout) and timeout > 0):
        out.append(f"--timeout {timeout}: give a positive, finite number of seconds")
    if not 0 <= seed <= SEED_MAX:
        out.append(f"--seed {seed}: give an integer from 0 to {SEED_MAX}")
    return out


def _gib(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB"
