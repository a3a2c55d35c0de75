"""The numeric reference's random directions kept between runs (backends/numeric_dirs.py) and the
buffers its forwards reuse: the same directions, steps and values as drawing them afresh, within
the store's bound. numpy-only parts here; torch and TF in processes of their own."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from gradviz.backends.graphs import rng_for
from gradviz.backends.numeric import DIRECTIONS, _Directions
from gradviz.backends.numeric_dirs import DIRS_MAX_BYTES, DirectionStore, Drawn, dirs_bound


def drawn_afresh(name: str, shape: tuple) -> np.ndarray:
    """The directions as the numeric reference always drew them: one seeded stream per name."""
    return rng_for(0, "numeric:" + name).standard_normal((DIRECTIONS,) + shape)


def all_chunks(directions: _Directions, per: int):
    got, norms = [], []
    for k0 in range(0, DIRECTIONS, per):
        v, n = directions.chunk(k0, min(per, DIRECTIONS - k0))
        got.append(v.copy())
        norms.append(n.copy())
    directions.drawn_all()
    return np.concatenate(got), np.concatenate(norms)


@pytest.mark.parametrize("per", [1, 3, 16])
@pytest.mark.parametrize("store_bytes", [None, 0, DIRS_MAX_BYTES])
def test_directions_are_the_seeded_stream_whatever_the_chunks_and_store(per, store_bytes):
    shape = (7, 5)
    store = DirectionStore(store_bytes) if store_bytes is not None else None
    want = drawn_afresh("x", shape)
    want_norms = np.sqrt(np.einsum("ij,ij->i", want.reshape(DIRECTIONS, -1),
                                   want.reshape(DIRECTIONS, -1)))
    first, first_norms = all_chunks(_Directions("x", shape, per, store), per)
    assert np.array_equal(first, want)
    np.testing.assert_allclose(first_norms, want_norms, rtol=1e-15)
    kept = store is not None and store_bytes > 0
    assert (store is not None and len(store) == 1) == kept
    # the next run of that name and shape reads the store (or draws the same again)
    again, again_norms = all_chunks(_Directions("x", shape, per, store), per)
    assert np.array_equal(again, want) and np.array_equal(again_norms, first_norms)
    if kept:
        assert store.get("x", shape).v is not None and len(store) == 1


def test_another_name_or_shape_has_its_own_directions():
    store = DirectionStore()
    a, _ = all_chunks(_Directions("x", (40,), 16, store), 16)
    b, _ = all_chunks(_Directions("w", (40,), 16, store), 16)
    c, _ = all_chunks(_Directions("x", (4, 10), 16, store), 16)
    assert np.array_equal(b, drawn_afresh("w", (40,)))
    assert np.array_equal(c, drawn_afresh("x", (4, 10)))
    assert not np.array_equal(a, b) and len(store) == 3


def test_directions_left_undrawn_are_not_kept():
    store = DirectionStore()
    d = _Directions("x", (30,), 4, store)
    d.chunk(0, 4)                       # the pass failed after its first chunk
    assert len(store) == 0
    full, _ = all_chunks(_Directions("x", (30,), 4, store), 4)
    assert np.array_equal(full, drawn_afresh("x", (30,))) and len(store) == 1


def test_the_store_keeps_what_its_bound_allows_least_recently_used_first():
    one = Drawn(np.zeros((DIRECTIONS, 100)), np.zeros(DIRECTIONS))
    store = DirectionStore(2 * one.nbytes)
    for name in "abc":
        assert store.put(name, (100,), Drawn(one.v.copy(), one.norms.copy()))
        assert store.bytes() <= store.max_bytes
    assert store.get("a", (100,)) is None and store.get("b", (100,)) is not None
    store.put("d", (100,), Drawn(one.v.copy(), one.norms.copy()))   # b was used: c goes
    assert store.get("c", (100,)) is None and store.get("b", (100,)) is not None
    big = Drawn(np.zeros((DIRECTIONS, 1000)), np.zeros(DIRECTIONS))
    assert not store.put("big", (1000,), big) and store.get("big", (1000,)) is None
    assert store.bytes() <= store.max_bytes


def test_the_bound_is_an_eighth_of_the_workers_memory_limit_at_most_512_mib():
    assert dirs_bound(0) == DIRS_MAX_BYTES == 512 << 20
    assert dirs_bound(64 << 30) == DIRS_MAX_BYTES
    assert dirs_bound(1 << 30) == 128 << 20
    assert dirs_bound(8 << 20) == 1 << 20


def in_fresh_process(code: str) -> None:
    """Run `code` in a python of its own: the test process never imports a framework."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]


# 600000 elements: one direction per chunk and one perturbation per forward (too big to batch),
# the path of the app's 10^6-element runs
@pytest.mark.parametrize("fw,qualname", [("torch", "MulWeights"), ("tf", "mul_weights")])
def test_kept_directions_give_the_numbers_of_directions_drawn_afresh(examples_dir, fw, qualname):
    path = examples_dir / ("tutorial_torch.py" if fw == "torch" else "tutorial_tf.py")
    in_fresh_process(f"""
        import numpy as np
        from gradviz.backends import load_backend
        from gradviz.backends.graphs import rng_for
        from gradviz.model import RunRequest, RunSettings
        req = RunRequest({str(path)!r}, {qualname!r}, {fw!r},
                         RunSettings(shape=(600000,), modes=("default", "custom", "numeric"),
                                     upstream="random", timeout=600))
        keeps = load_backend({fw!r})                     # no limit: keeps up to 512 MiB
        small = load_backend({fw!r}, 64 << 20)           # 8 MiB: keeps none of these
        runs = [keeps.handle("run", req), keeps.handle("run", req), small.handle("run", req)]
        assert len(keeps.directions) == 3 and len(small.directions) == 0
        for res in runs:
            assert res.status == "ok" and not res.mode_errors, res
        for t in runs[0].tensors:
            p = [r.tensor(t.name).numeric.projections for r in runs]
            for mode in ("numeric", "custom", "default"):
                assert np.array_equal(p[0][mode], p[1][mode]), (t.name, mode)
                assert np.array_equal(p[0][mode], p[2][mode]), (t.name, mode)
            # the directions of the seeded stream: custom's g . v / |v| from them
            v = rng_for(0, "numeric:" + t.name).standard_normal((16, 600000))
            g = np.asarray(t.grads["custom"], dtype=np.float64)
            np.testing.assert_allclose(p[0]["custom"], v @ g / np.linalg.norm(v, axis=1),
                                       rtol=1e-10)
            # and a finite difference of a product: the custom gradient's projection
            np.testing.assert_allclose(p[0]["numeric"], p[0]["custom"], rtol=1e-4, atol=1e-4)
    """)


def test_torch_axpy_into_an_earlier_result_gives_the_values_of_a_fresh_one():
    in_fresh_process("""
        import torch
        from gradviz.backends.torch_backend import NumericKit
        kit = NumericKit("cpu")
        g = torch.Generator().manual_seed(0)
        a = torch.randn(1000, 30, dtype=torch.float64, generator=g)
        b = torch.randn(1000, 30, dtype=torch.float64, generator=g)
        out = kit.axpy(a, b, 1e-6)
        for scale in (1e-6, -1e-6, 3.5):
            got = kit.axpy(a, b, scale, out=out)
            assert got is out and torch.equal(got, torch.add(a, b, alpha=scale))
        # a transposed input, another dtype, an aliased buffer: a fresh result
        at, bt = a.t(), b.t()
        got = kit.axpy(at, bt, 2.0, out=out)
        assert got is not out and got.stride() == torch.add(at, bt, alpha=2.0).stride()
        assert torch.equal(got, torch.add(at, bt, alpha=2.0))
        got = kit.axpy(a.float(), b.float(), 2.0, out=out)
        assert got is not out and got.dtype == torch.float32
        assert kit.axpy(out, b, 2.0, out=out) is not out
        step, scale = kit.step(b.numpy(), 0.5)
        assert scale == 0.5 and step.data_ptr() == b.data_ptr()     # shared, not copied
        # the loss's product: into the last forward's buffer, the same sum as a fresh product
        from gradviz.backends.numeric_eval import CachedConsts
        F = CachedConsts(kit.F, kit)
        first = F.weighted_sum(a, b)
        kept = F._product
        for t in (b, b * 3.0, -a):
            got = F.weighted_sum(a, t)
            assert torch.equal(got, torch.sum(a * t)) and torch.equal(got, kit.F.weighted_sum(a, t))
        assert F._product is kept and torch.equal(first, torch.sum(a * b))
        odd = b.t().contiguous().t()                # other strides: a fresh product, as before
        got = F.weighted_sum(a, odd)
        assert F._product is not kept and torch.equal(got, torch.sum(a * odd))
    """)


def test_tf_step_in_a_reused_buffer_gives_the_values_tf_computes():
    in_fresh_process("""
        import numpy as np
        import tensorflow as tf
        from gradviz.backends.tf_backend import NumericKit
        kit = NumericKit("/CPU:0")
        rng = np.random.default_rng(0)
        big, small = rng.standard_normal((4, 300000)), rng.standard_normal((4, 30))
        x = tf.constant(rng.standard_normal(300000))
        with kit.scope():
            ptrs = set()
            for i, scale in enumerate((1e-6, 3.5e-7, 2.0, 1e-6)):
                step, one = kit.step(big[i], scale)
                assert one == 1.0
                want = tf.constant(big[i]) * scale
                assert np.array_equal(step.numpy(), want.numpy())
                assert np.array_equal((x + step).numpy(), (x + want).numpy())
                assert np.array_equal((x - step).numpy(), (x - want).numpy())
                ptrs.add(step._numpy().ctypes.data)      # the tensor's own memory
                del step
            assert len(ptrs) == 1                        # one buffer, reused per direction
            step, _ = kit.step(small[0], 0.5)            # a small one: a TF tensor as before
            assert np.array_equal(step.numpy(), (tf.constant(small[0]) * 0.5).numpy())
    """)
