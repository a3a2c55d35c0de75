"""The numeric reference's random directions (backends/numeric_dirs.py: seeded Rademacher ±1) and
the buffers its forwards reuse. numpy-only parts here; torch and TF in processes of their own."""

import zlib

import numpy as np
import pytest
from fresh_process import in_fresh_process

from gradviz.backends.numeric import DIRECTIONS, _Directions
from gradviz.backends.numeric_dirs import expand, rademacher, signs


def by_hand(name: str, shape: tuple) -> np.ndarray:
    """The documented definition, bit by bit in Python ints: direction k is ceil(n / 64) raw
    outputs of the PCG64 stream of [0, crc32("numeric:" + name)], bit i read as -1 where set."""
    n = int(np.prod(shape))
    words = -(-n // 64)
    raw = [
        int(r)
        for r in np.random.default_rng(
            [0, zlib.crc32(("numeric:" + name).encode())]
        ).bit_generator.random_raw(DIRECTIONS * words)
    ]
    return np.array(
        [
            [-1.0 if raw[k * words + i // 64] >> (i % 64) & 1 else 1.0 for i in range(n)]
            for k in range(DIRECTIONS)
        ]
    ).reshape((DIRECTIONS,) + tuple(shape))


def all_chunks(directions: _Directions, per: int):
    got, norms = [], []
    for k0 in range(0, DIRECTIONS, per):
        v, n = directions.chunk(k0, min(per, DIRECTIONS - k0))
        got.append(v.copy())
        norms.append(n.copy())
    return np.concatenate(got), np.concatenate(norms)


def test_directions_are_the_documented_signs_with_known_values():
    got = rademacher("x", (2, 5), DIRECTIONS)
    assert got.dtype == np.float64 and got.shape == (DIRECTIONS, 2, 5)
    assert got[:3].tolist() == [
        [[-1, -1, -1, 1, -1], [1, 1, -1, 1, 1]],
        [[-1, -1, 1, -1, 1], [-1, -1, 1, 1, -1]],
        [[-1, -1, 1, 1, -1], [-1, 1, 1, 1, -1]],
    ]
    for name, shape in [("x", (2, 5)), ("weights", (70,)), ("out", (3, 64)), ("b", (1,))]:
        assert np.array_equal(rademacher(name, shape, DIRECTIONS), by_hand(name, shape)), name
    # a direction past the first 64 elements reads the next raw output
    assert rademacher("x", (70,), DIRECTIONS)[1][60:70].tolist() == [
        1,
        -1,
        1,
        -1,
        -1,
        1,
        -1,
        1,
        -1,
        1,
    ]


@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.float64])
def test_a_direction_expands_to_the_same_signs_in_any_dtype(dtype):
    shape = (7, 13)  # 91 elements: a last byte of 3 bits
    bits = signs("x", shape, DIRECTIONS)
    want = by_hand("x", shape)
    for k in range(DIRECTIONS):
        out = np.full(shape, 7, dtype=dtype)
        assert expand(bits[k], out) is out and np.array_equal(out, want[k])


def test_chunks_are_int8_signs():
    v, norms = _Directions("x", (300,), 4).chunk(0, 4)
    assert v.dtype == np.int8 and set(np.unique(v)) == {-1, 1} and v.shape == (4, 300)


@pytest.mark.parametrize("per", [1, 3, 16])
def test_chunks_give_the_same_directions_whatever_their_size(per):
    shape = (7, 5)
    want = by_hand("x", shape)
    first, norms = all_chunks(_Directions("x", shape, per), per)
    assert np.array_equal(first, want)
    assert np.array_equal(norms, np.full(DIRECTIONS, np.sqrt(35.0)))
    np.testing.assert_allclose(
        norms, np.linalg.norm(want.reshape(DIRECTIONS, -1), axis=1), rtol=1e-15
    )
    again, _ = all_chunks(_Directions("x", shape, per), per)  # a re-run draws the same
    assert np.array_equal(again, want)


def test_another_name_or_shape_has_its_own_directions():
    a, _ = all_chunks(_Directions("x", (40,), 16), 16)
    b, _ = all_chunks(_Directions("w", (40,), 16), 16)
    c, _ = all_chunks(_Directions("x", (4, 10), 16), 16)
    assert np.array_equal(b, by_hand("w", (40,))) and np.array_equal(c, by_hand("x", (4, 10)))
    assert not np.array_equal(a, b)
    # the same stream: the first 40 signs of a shape are those of any other of 40 elements
    assert np.array_equal(a.reshape(DIRECTIONS, -1), c.reshape(DIRECTIONS, -1))


def test_the_two_buffers_are_reused_in_turn():
    d = _Directions("x", (300,), 1)
    ptrs = [d.chunk(k, 1)[0].ctypes.data for k in range(4)]
    assert ptrs[0] == ptrs[2] and ptrs[1] == ptrs[3] and ptrs[0] != ptrs[1]


# 600000 elements: one direction per chunk and one perturbation per forward (too big to batch),
# the path of the app's 10^6-element runs
@pytest.mark.parametrize("fw,qualname", [("torch", "MulWeights"), ("tf", "mul_weights")])
def test_projections_are_along_the_documented_directions_in_both_frameworks(
    examples_dir, fw, qualname
):
    path = examples_dir / ("tutorial_torch.py" if fw == "torch" else "tutorial_tf.py")
    in_fresh_process(f"""
        import numpy as np
        from gradviz.backends import load_backend
        from gradviz.backends.numeric_dirs import expand, rademacher, signs
        from gradviz.model import RunRequest, RunSettings
        req = RunRequest({str(path)!r}, {qualname!r}, {fw!r},
                         RunSettings(shape=(600000,), modes=("default", "custom", "numeric"),
                                     upstream="random", timeout=600))
        backend = load_backend({fw!r})
        runs = [backend.handle("run", req), backend.handle("run", req)]
        for res in runs:
            assert res.status == "ok" and not res.mode_errors, res
        for t in runs[0].tensors:
            p = [r.tensor(t.name).numeric.projections for r in runs]
            for mode in ("numeric", "custom", "default"):
                assert np.array_equal(p[0][mode], p[1][mode]), (t.name, mode)
            # each mode's g . v / |v| along the seeded signs, |v| = sqrt(n)
            v = rademacher(t.name, (600000,), 16)
            for mode in ("custom", "default"):
                g = np.asarray(t.grads[mode], dtype=np.float64)
                np.testing.assert_allclose(p[0][mode], v @ g / np.sqrt(600000), rtol=1e-10)
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
        # int8 signs (the projections' directions): cast once into one reused float64 buffer
        import numpy as np
        signs = np.where(b.numpy() > 0, 1, -1).astype(np.int8)
        one, scale = kit.step(signs, 0.5)
        assert scale == 0.5 and one.dtype == torch.float64
        assert torch.equal(one, torch.as_tensor(signs.astype(np.float64)))
        assert torch.equal(kit.axpy(a, one, 1e-6), torch.add(a, torch.sign(b), alpha=1e-6))
        two, _ = kit.step(-signs, 0.5)
        assert two.data_ptr() == one.data_ptr() and torch.equal(two, -torch.sign(b))
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
            # int8 signs (the projections' directions): the float64 product, in the buffer too
            for v in (np.sign(big[0]).astype(np.int8), np.sign(small[0]).astype(np.int8)):
                step, one = kit.step(v, 3.5e-7)
                want = tf.constant(v.astype(np.float64)) * 3.5e-7
                assert one == 1.0 and step.dtype == tf.float64
                assert np.array_equal(step.numpy(), want.numpy())
    """)


# The default upstream (ones): the loss is the sum of the output itself, the same bits as the
# sum of the product it replaced, in the numbers the numeric pass reports too.
@pytest.mark.parametrize("fw,qualname", [("torch", "MulWeights"), ("tf", "mul_weights")])
def test_a_weight_of_ones_gives_the_bits_of_the_product_it_replaces(examples_dir, fw, qualname):
    path = examples_dir / ("tutorial_torch.py" if fw == "torch" else "tutorial_tf.py")
    in_fresh_process(f"""
        import numpy as np
        from gradviz.backends import load_backend, numeric_eval
        from gradviz.model import RunRequest, RunSettings
        if {fw!r} == "torch":
            import torch
            from gradviz.backends.torch_backend import NumericKit
            kit = NumericKit("cpu")
            mk = lambda a: torch.as_tensor(a)
            odd = lambda t: t.reshape(300, 1000).t()       # (1000, 300), not contiguous
        else:
            import tensorflow as tf
            from gradviz.backends.tf_numeric_kit import NumericKit
            kit = NumericKit("/CPU:0")
            mk = lambda a: tf.constant(a)
            odd = None
        rng = np.random.default_rng(0)
        ones, noise = np.ones(300000), rng.standard_normal(300000)
        t = mk(rng.standard_normal(300000) * 1e3)
        with kit.scope():
            F = numeric_eval.CachedConsts(kit.F, kit)
            w = F.const(ones, t)
            got = F.weighted_sum(w, t)
            assert F._product is None                      # no product made
            assert np.array_equal(np.asarray(got), np.asarray(kit.F.weighted_sum(w, t)))
            r = F.const(noise, t)                          # another weight: the product, as before
            assert np.array_equal(np.asarray(F.weighted_sum(r, t)),
                                  np.asarray(kit.F.weighted_sum(r, t)))
            if odd is not None:                            # other strides: the product too
                o = odd(mk(rng.standard_normal(300000)))
                w2 = F.const(np.ones((1000, 300)), o)
                assert not kit.same_layout(w2, o)
                assert np.array_equal(np.asarray(F.weighted_sum(w2, o)),
                                      np.asarray(kit.F.weighted_sum(w2, o)))
        req = RunRequest({str(path)!r}, {qualname!r}, {fw!r},
                         RunSettings(shape=(600000,), modes=("default", "custom", "numeric"),
                                     timeout=600))
        fast = load_backend({fw!r}).handle("run", req)
        numeric_eval.CachedConsts.const = lambda self, arr, like, _c=numeric_eval.CachedConsts.const: \\
            (_c(self, arr, like), self._ones.clear())[0]   # the product path only
        slow = load_backend({fw!r}).handle("run", req)
        for res in (fast, slow):
            assert res.status == "ok" and not res.mode_errors, res
        for t in fast.tensors:
            a, b = t.numeric.projections, slow.tensor(t.name).numeric.projections
            for mode in ("numeric", "custom", "default"):
                assert np.array_equal(a[mode], b[mode]), (t.name, mode)
    """)
