"""Plot data reductions: exact values, spikes and non-finite positions survive."""

import numpy as np
import pytest

from gradviz.plots import series as S


def test_small_series_is_kept_whole_and_nonfinite_become_markers():
    y = np.array([1.0, np.nan, 3.0, np.inf, -np.inf, 6.0])
    s = S.minmax_decimate(y, buckets=10)
    assert not s.decimated
    assert s.x.tolist() == [0, 2, 5]
    assert s.y.tolist() == [1.0, 3.0, 6.0]
    nf = s.nonfinite
    assert (nf.nan, nf.posinf, nf.neginf) == (1, 1, 1)
    assert nf.nan_x.tolist() == [1] and nf.posinf_x.tolist() == [3] and nf.neginf_x.tolist() == [4]
    assert nf.text() == "NaN 1 · +Inf 1 · -Inf 1"


def test_minmax_keeps_min_and_max_of_each_bucket_in_element_order():
    y = np.array([0, 5, 1, 2, 9, 3, 4, -7, 8, 6, 0, 0], dtype=float)
    s = S.minmax_decimate(y, buckets=3)  # buckets of 4: [0 5 1 2] [9 3 4 -7] [8 6 0 0]
    assert s.decimated
    assert s.x.tolist() == [0, 1, 4, 7, 8, 10]
    assert s.y.tolist() == [0, 5, 9, -7, 8, 0]


def test_flat_bucket_gives_one_point():
    s = S.minmax_decimate(np.zeros(100), buckets=10)
    assert s.x.size == 10 and np.all(s.y == 0)


def test_single_spike_in_a_million_survives():
    y = np.ones(1_000_000)
    y[123_457] = 50.0
    y[999_999] = -3.0
    s = S.minmax_decimate(y, buckets=800)
    assert s.x.size <= 1600
    assert s.y.max() == 50.0 and s.x[np.argmax(s.y)] == 123_457
    assert s.y.min() == -3.0 and s.x[np.argmin(s.y)] == 999_999


def test_nan_positions_kept_and_thinned_one_per_bucket():
    y = np.ones(10_000)
    y[[5, 6, 7, 5000]] = np.nan  # buckets of 100: 5, 6, 7 share bucket 0
    s = S.minmax_decimate(y, buckets=100)
    assert s.nonfinite.nan == 4
    assert s.nonfinite.nan_x.tolist() == [5, 6, 7, 5000]  # few enough: all kept
    y[:300] = np.nan  # 300 + 1 NaN, more than 100 buckets
    s = S.minmax_decimate(y, buckets=100)
    assert s.nonfinite.nan == 301
    assert s.nonfinite.nan_x.tolist() == [0, 100, 200, 5000]  # first in each bucket that has any
    assert np.all(np.isfinite(s.y)) and 0 not in s.x


def test_bucket_of_only_nan_draws_no_point():
    y = np.arange(20, dtype=float)
    y[5:10] = np.nan  # bucket 1 of 4 is all NaN
    s = S.minmax_decimate(y, buckets=4)
    assert s.x.tolist() == [0, 4, 10, 14, 15, 19]


def test_vs_input_sorts_by_value_and_counts_unplaceable():
    v = np.array([3.0, -1.0, np.nan, 2.0])
    g = np.array([30.0, -10.0, 99.0, np.nan])
    s = S.vs_input(v, g)
    assert s.x.tolist() == [-1.0, 3.0] and s.y.tolist() == [-10.0, 30.0]
    assert s.nonfinite.nan_x.tolist() == [2.0]  # NaN gradient marked at its input value
    assert s.dropped == 1


def test_shared_edges_cover_all_arrays_and_exclude_nonfinite():
    a = np.array([0.0, 1.0, np.nan])
    b = np.array([-2.0, np.inf, 4.0])
    edges = S.shared_edges([a, None, b], bins=6)
    assert edges.tolist() == [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0]
    ha, hb = S.shared_histograms([a, b], bins=6)
    assert ha.counts.tolist() == [0, 0, 1, 1, 0, 0] and ha.nonfinite.nan == 1
    assert hb.counts.tolist() == [1, 0, 0, 0, 0, 1] and hb.nonfinite.posinf == 1
    assert S.shared_edges([np.full(3, 2.0)], bins=2).tolist() == [1.0, 2.0, 3.0]


def test_scatter_subsample_is_seeded_and_keeps_the_largest_disagreement():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(100_000)
    y = x.copy()
    y[77_777] = x[77_777] + 100.0
    y[5] = np.nan
    a = S.scatter(x, y, max_points=1000, seed=3)
    b = S.scatter(x, y, max_points=1000, seed=3)
    assert a.shown == 1000 and a.n == 100_000 and a.nonfinite == 1
    assert np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y)
    assert y[77_777] in a.y and x.max() in a.x and x.min() in a.x


def test_heatmap_block_max_abs_keeps_sign_spike_and_nan():
    m = np.zeros((400, 300))
    m[10, 10] = -9.0
    m[399, 299] = 5.0
    m[200, 0] = np.nan
    hm = S.heatmap(m, max_side=100)
    assert hm.block == (4, 3) and hm.data.shape == (100, 100)
    assert hm.data[2, 3] == -9.0 and hm.data[99, 99] == 5.0
    assert np.isnan(hm.data[50, 0]) and np.isnan(hm.data).sum() == 1
    assert hm.nonfinite.nan == 1
    assert S.heatmap(np.zeros(5)) is None
    small = S.heatmap(np.arange(6.0).reshape(2, 3))
    assert small.block == (1, 1) and small.data.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_ranges():
    assert S.finite_range([None, np.array([np.nan, 2.0, -1.0])]) == (-1.0, 2.0)
    assert S.finite_range([np.array([np.nan])]) is None
    assert S.padded_range(0.0, 10.0) == pytest.approx((-0.5, 10.5))
    assert S.padded_range(0.0, 0.0) == (-1.0, 1.0)
    assert S.padded_range(2.0, 2.0) == pytest.approx((1.8, 2.2))


def _decimated_with_masks(y, buckets):
    """minmax_decimate as it was before its all-finite fast path: every NaN/Inf mask and copy."""
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    n = y.size
    xs = np.arange(n, dtype=np.float64)
    finite = np.isfinite(y)
    size = -(-n // buckets)
    nb = -(-n // size)
    pad = nb * size - n
    lo_src = np.concatenate([np.where(finite, y, np.inf), np.full(pad, np.inf)]).reshape(nb, size)
    hi_src = np.concatenate([np.where(finite, y, -np.inf), np.full(pad, -np.inf)]).reshape(nb, size)
    base = np.arange(nb) * size
    i_lo, i_hi = base + lo_src.argmin(axis=1), base + hi_src.argmax(axis=1)
    has = np.isfinite(lo_src.min(axis=1))
    i_lo, i_hi = i_lo[has], i_hi[has]
    first, second = np.minimum(i_lo, i_hi), np.maximum(i_lo, i_hi)
    idx = np.stack([first, second], axis=1).reshape(-1)
    keep = np.ones(idx.size, dtype=bool)
    keep[1::2] = second != first
    return xs[idx[keep]], y[idx[keep]]


_RNG = np.random.default_rng(11)
FINITE_ARRAYS = {
    "float64, buckets that divide it": (_RNG.standard_normal(8000), 800),
    "float64, a shorter last bucket": (_RNG.standard_normal(10_007), 800),
    "float32 gradient": (_RNG.standard_normal(99_999).astype(np.float32), 800),
    "a last bucket of one element": (_RNG.standard_normal(1601), 800),
    "ties and zeros (first index wins)": (np.round(_RNG.standard_normal(5000)), 300),
    "-0.0 and 0.0": (np.where(_RNG.random(4000) < 0.5, -0.0, 0.0), 100),
    "float16, 2-D": (_RNG.standard_normal((300, 40)).astype(np.float16), 50),
    "constant": (np.full(3000, 2.5), 700),
    "subnormals and huge values": (np.array([5e-324, -1e308, 1e308, 0.0] * 700), 200),
}


@pytest.mark.parametrize("case", sorted(FINITE_ARRAYS))
def test_decimating_a_finite_array_gives_the_points_the_masked_code_gave(case):
    y, buckets = FINITE_ARRAYS[case]
    s = S.minmax_decimate(y, buckets=buckets)
    want_x, want_y = _decimated_with_masks(y, buckets)
    assert s.decimated and s.n == y.size and s.nonfinite.total == 0
    assert s.x.dtype == s.y.dtype == np.float64
    assert np.array_equal(s.x, want_x) and np.array_equal(s.y, want_y)
    assert np.array_equal(np.signbit(s.y), np.signbit(want_y))
    assert s.nonfinite.nan_x.dtype == np.float64 and s.nonfinite.nan_x.size == 0
