"""Plot data from gradient arrays, small enough to draw and export whatever the tensor size.

numpy only. Every reduction keeps what a reader must not miss: spikes (min/max per bucket) and
non-finite values (NaN/+Inf/-Inf positions kept as markers and counted, never silently dropped).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DEFAULT_BUCKETS = 800  # ~2 points per pixel of a wide panel: finer is invisible, only bigger
DEFAULT_BINS = 60
DEFAULT_SCATTER_POINTS = 5000
DEFAULT_HEATMAP_SIDE = (
    128  # about one cell per pixel of an exported panel: a spike stays a visible cell
)


@dataclass(frozen=True)
class NonFinite:
    """Where the non-finite values of a series are (x positions, decimated) and how many there are."""

    nan_x: np.ndarray = field(default_factory=lambda: np.zeros(0))
    posinf_x: np.ndarray = field(default_factory=lambda: np.zeros(0))
    neginf_x: np.ndarray = field(default_factory=lambda: np.zeros(0))
    nan: int = 0
    posinf: int = 0
    neginf: int = 0

    @property
    def total(self) -> int:
        return self.nan + self.posinf + self.neginf

    def text(self) -> str:
        """'NaN 3 · +Inf 1' or '' when all values are finite."""
        parts = [
            f"{label} {n:,}"
            for label, n in (("NaN", self.nan), ("+Inf", self.posinf), ("-Inf", self.neginf))
            if n
        ]
        return " · ".join(parts)


@dataclass(frozen=True)
class Series:
    """A 1-D curve ready to draw: finite points only, non-finite ones as markers."""

    x: np.ndarray  # float64, ascending
    y: np.ndarray  # float64, finite
    nonfinite: NonFinite
    n: int  # elements in the original array
    decimated: bool  # True when x/y hold per-bucket min/max rather than every element
    dropped: int = 0  # points left out because their x was not finite (vs_input only)


@dataclass(frozen=True)
class Histogram:
    counts: np.ndarray  # int64, len(edges) - 1
    edges: np.ndarray  # float64, shared across a row
    nonfinite: NonFinite  # counts only (no positions)
    n: int


@dataclass(frozen=True)
class Scatter:
    """y (e.g. custom) against x (e.g. default), element by element."""

    x: np.ndarray
    y: np.ndarray
    n: int  # elements in each array
    shown: int  # points kept (<= n)
    nonfinite: int  # elements where x or y is not finite (not drawn, counted)


@dataclass(frozen=True)
class Heatmap:
    data: np.ndarray  # 2-D float64 (may hold NaN/Inf: drawn as marked cells)
    shape: tuple[int, ...]  # original tensor shape
    block: tuple[int, int]  # rows x cols of original elements per cell (1, 1) = not reduced
    nonfinite: NonFinite  # counts only


def _flat(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).reshape(-1)


def _bucket_ids(idx: np.ndarray, n: int, buckets: int) -> np.ndarray:
    return (idx.astype(np.int64) * buckets) // max(n, 1)


def _thin_positions(idx: np.ndarray, n: int, buckets: int) -> np.ndarray:
    """Keep the first position in each bucket that has any: every region with a NaN stays marked."""
    if idx.size <= buckets:
        return idx
    _, first = np.unique(_bucket_ids(idx, n, buckets), return_index=True)
    return idx[first]


def nonfinite_markers(y, x=None, buckets: int = DEFAULT_BUCKETS) -> NonFinite:
    """Positions (in x units; element index when x is None) and counts of NaN, +Inf and -Inf."""
    y = _flat(y)
    xs = np.arange(y.size, dtype=np.float64) if x is None else _flat(x)
    out: dict[str, Any] = {}
    for key, mask in (("nan", np.isnan(y)), ("posinf", np.isposinf(y)), ("neginf", np.isneginf(y))):
        idx = np.flatnonzero(mask)
        out[key] = int(idx.size)
        out[key + "_x"] = xs[_thin_positions(idx, y.size, buckets)]
    return NonFinite(**out)


def minmax_decimate(y, x=None, buckets: int = DEFAULT_BUCKETS) -> Series:
    """At most 2 * `buckets` points: per bucket of consecutive elements, its min and its max
    (in element order), so a single-element spike survives any reduction.

    `x` (same length, ascending) gives the x of each element; default: the element index.
    Non-finite values never enter the curve; they are returned as markers.
    """
    raw = np.asarray(y)
    if x is None and raw.size > 2 * buckets and raw.dtype.kind == "f" and np.isfinite(raw).all():
        return _decimate_finite(raw.reshape(-1), buckets)
    y = _flat(y)
    n = y.size
    xs = np.arange(n, dtype=np.float64) if x is None else _flat(x)
    if xs.size != n:
        raise ValueError(f"x has {xs.size} elements, y has {n}")
    markers = nonfinite_markers(y, xs, buckets)
    finite = np.isfinite(y)
    if n <= 2 * buckets:
        return Series(xs[finite], y[finite], markers, n, False)
    size = -(-n // buckets)  # elements per bucket (ceil)
    nb = -(-n // size)
    pad = nb * size - n
    lo_src = np.concatenate([np.where(finite, y, np.inf), np.full(pad, np.inf)]).reshape(nb, size)
    hi_src = np.concatenate([np.where(finite, y, -np.inf), np.full(pad, -np.inf)]).reshape(nb, size)
    base = np.arange(nb) * size
    i_lo = base + lo_src.argmin(axis=1)
    i_hi = base + hi_src.argmax(axis=1)
    has = np.isfinite(lo_src.min(axis=1))  # bucket holds at least one finite value
    i_lo, i_hi = i_lo[has], i_hi[has]
    first = np.minimum(i_lo, i_hi)
    second = np.maximum(i_lo, i_hi)
    idx = np.stack([first, second], axis=1).reshape(-1)
    keep = np.ones(idx.size, dtype=bool)
    keep[1::2] = second != first  # a bucket whose min is its max: one point
    idx = idx[keep]
    return Series(xs[idx], y[idx], markers, n, True)


def _decimate_finite(y: np.ndarray, buckets: int) -> Series:
    """minmax_decimate of an all-finite array by index: the same points, without the copies that
    set NaN/Inf aside (a 10^6-element gradient is decimated per mode and per run). The min and max
    are found in y's own dtype: a float32 -> float64 cast keeps order and ties."""
    n = y.size
    size = -(-n // buckets)  # elements per bucket (ceil), as below
    full = n // size
    rows = y[: full * size].reshape(full, size)
    i_lo, i_hi = rows.argmin(axis=1), rows.argmax(axis=1)
    if full * size < n:  # the last bucket, shorter
        tail = y[full * size :]
        i_lo = np.append(i_lo, tail.argmin())
        i_hi = np.append(i_hi, tail.argmax())
    base = np.arange(i_lo.size) * size
    first = base + np.minimum(i_lo, i_hi)
    second = base + np.maximum(i_lo, i_hi)
    idx = np.stack([first, second], axis=1).reshape(-1)
    keep = np.ones(idx.size, dtype=bool)
    keep[1::2] = second != first  # a bucket whose min is its max: one point
    idx = idx[keep]
    return Series(idx.astype(np.float64), y[idx].astype(np.float64), NonFinite(), n, True)


def vs_input(value, grad, buckets: int = DEFAULT_BUCKETS) -> Series:
    """Gradient against the forward value of the same element (elementwise ops), sorted by value.
    Elements whose value is not finite cannot be placed: they are counted in `dropped`."""
    x, y = _flat(value), _flat(grad)
    if x.size != y.size:
        raise ValueError(f"value has {x.size} elements, gradient has {y.size}")
    ok = np.isfinite(x)
    order = np.argsort(x[ok], kind="stable")
    s = minmax_decimate(y[ok][order], x[ok][order], buckets)
    return Series(s.x, s.y, s.nonfinite, x.size, s.decimated, dropped=int((~ok).sum()))


def shared_edges(arrays: Sequence, bins: int = DEFAULT_BINS) -> np.ndarray:
    """One set of bin edges covering the finite values of all arrays (None entries ignored),
    so histograms of one row can be compared bar by bar."""
    lo, hi = finite_range(arrays) or (-1.0, 1.0)
    if hi <= lo:  # all equal: a visible bin around the value
        half = abs(lo) * 0.5 or 0.5
        lo, hi = lo - half, hi + half
    return np.linspace(lo, hi, bins + 1)


def histogram(a, edges: np.ndarray) -> Histogram:
    f = _flat(a)
    finite = np.isfinite(f)
    counts, _ = np.histogram(f[finite], bins=edges)
    nf = NonFinite(
        nan=int(np.isnan(f).sum()),
        posinf=int(np.isposinf(f).sum()),
        neginf=int(np.isneginf(f).sum()),
    )
    return Histogram(counts.astype(np.int64), np.asarray(edges, dtype=np.float64), nf, f.size)


def shared_histograms(arrays: Sequence, bins: int = DEFAULT_BINS) -> list[Histogram | None]:
    edges = shared_edges(arrays, bins)
    return [None if a is None else histogram(a, edges) for a in arrays]


def scatter(x, y, max_points: int = DEFAULT_SCATTER_POINTS, seed: int = 0) -> Scatter:
    """y against x element by element; above `max_points`, a fixed-seed random subsample plus the
    extremes of x, of y and of |y - x| (the largest disagreement is never left out)."""
    x, y = _flat(x), _flat(y)
    if x.size != y.size:
        raise ValueError(f"x has {x.size} elements, y has {y.size}")
    ok = np.isfinite(x) & np.isfinite(y)
    idx = np.flatnonzero(ok)
    bad = int(x.size - idx.size)
    if idx.size > max_points:
        xs, ys = x[idx], y[idx]
        extremes = {
            int(np.argmin(xs)),
            int(np.argmax(xs)),
            int(np.argmin(ys)),
            int(np.argmax(ys)),
            int(np.argmax(np.abs(ys - xs))),
        }
        rng = np.random.default_rng(seed)
        pick = rng.choice(idx.size, size=max_points - len(extremes), replace=False)
        sel = np.union1d(pick, np.fromiter(extremes, dtype=np.int64))
        idx = idx[sel]
    return Scatter(x[idx], y[idx], x.size, int(idx.size), bad)


def as_2d(a) -> np.ndarray | None:
    """A tensor seen as a matrix: (rows, everything else). None for 0-D and 1-D tensors."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim < 2:
        return None
    return a.reshape(a.shape[0], -1)


def heatmap(a, max_side: int = DEFAULT_HEATMAP_SIDE) -> Heatmap | None:
    """A 2-D view; bigger than `max_side` cells a side, each cell holds the signed value of largest
    magnitude of its block (a spike stays visible), or NaN if any element of the block is NaN."""
    m = as_2d(a)
    if m is None:
        return None
    f = m.reshape(-1)
    nf = NonFinite(
        nan=int(np.isnan(f).sum()),
        posinf=int(np.isposinf(f).sum()),
        neginf=int(np.isneginf(f).sum()),
    )
    r, c = m.shape
    br, bc = -(-r // max_side), -(-c // max_side)
    if br == 1 and bc == 1:
        return Heatmap(m.copy(), tuple(np.shape(a)), (1, 1), nf)
    R, C = -(-r // br), -(-c // bc)
    padded = np.zeros((R * br, C * bc))
    padded[:r, :c] = m
    blocks = padded.reshape(R, br, C, bc).transpose(0, 2, 1, 3).reshape(R, C, br * bc)
    mag = np.where(np.isnan(blocks), -1.0, np.abs(blocks))
    pick = np.take_along_axis(blocks, mag.argmax(axis=2)[..., None], axis=2)[..., 0]
    pick[np.isnan(blocks).any(axis=2)] = np.nan
    return Heatmap(pick, tuple(np.shape(a)), (br, bc), nf)


def finite_range(values: Sequence[np.ndarray | None]) -> tuple[float, float] | None:
    """min and max over the finite values of several arrays; None if there are none."""
    lo, hi = np.inf, -np.inf
    for v in values:
        if v is None:
            continue
        f = _flat(v)
        f = f[np.isfinite(f)]
        if f.size:
            lo, hi = min(lo, float(f.min())), max(hi, float(f.max()))
    return None if not np.isfinite(lo) else (lo, hi)


def padded_range(lo: float, hi: float, pad: float = 0.05) -> tuple[float, float]:
    """A view range around [lo, hi] with a margin; a constant gets a visible window around it.

    Spreads below float noise (1e-6 relative) count as constant, so a row of ones with 1e-9 of
    finite-difference noise does not magnify the noise into a full-height scribble."""
    if hi - lo <= 1e-6 * max(abs(lo), abs(hi)):
        mid = (lo + hi) / 2
        half = abs(mid) * 0.1 or 1.0
        return mid - half, mid + half
    m = (hi - lo) * pad
    return lo - m, hi + m
