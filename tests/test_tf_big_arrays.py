"""Big arrays into TensorFlow and back without copies (backends/tf_arrays.py): the values and
gradients stay exactly what the copies gave, and the shared buffers are what they claim."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from gradviz.backends.graphs import input_values, param_values
from gradviz.model import RunRequest, RunSettings
from gradviz.seeds import upstream_values

# 300 000 float32 elements are 1.2 MB: above tf_arrays.ZERO_COPY_BYTES, so the zero-copy path
# runs (for the leaves, the upstream gradient and every result)
BIG = (300_000,)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_big_tf_run_gives_the_exact_values(engine, examples_dir, dtype):
    settings = RunSettings(
        shape=BIG, dtype=dtype, modes=("default", "custom"), upstream="random", seed=7, timeout=300
    )
    [res] = engine.run(
        [RunRequest(str(examples_dir / "tutorial_tf.py"), "mul_weights", "tf", settings)]
    )
    assert res.status == "ok", res.error
    x = input_values(7, "x", BIG).astype(dtype)
    w = input_values(7, "weights", BIG).astype(dtype)
    up = upstream_values(settings, "out", BIG).astype(dtype)
    got = {t.name: t for t in res.tensors}
    # the cast is numpy's, as tf.constant's was: the same bits
    assert got["x"].value.dtype == np.dtype(dtype)
    assert got["x"].value.tobytes() == x.tobytes()
    assert got["weights"].value.tobytes() == w.tobytes()
    assert got["out"].value.tobytes() == (x * w).tobytes()
    for mode in ("custom", "default"):  # d(sum(up * x * w)) / dx = up * w, exactly in IEEE
        assert got["x"].grads[mode].tobytes() == (up * w).tobytes(), mode
        assert got["weights"].grads[mode].tobytes() == (up * x).tobytes(), mode
        assert got["out"].grads[mode].tobytes() == up.tobytes(), mode


def test_big_tf_two_passes_give_the_one_pass_result(engine, examples_dir):
    """The app's quick pass keeps its arrays (TF's buffers, the shared casts) in the worker for
    the numeric pass: the two passes still give exactly what one pass gives."""
    settings = RunSettings(shape=BIG, modes=("default", "custom", "numeric"), timeout=600)
    req = RunRequest(str(examples_dir / "tutorial_tf.py"), "mul_weights", "tf", settings)
    [one] = engine.run([req])
    partial = []
    [two] = engine.run([req], on_partial=partial.append)
    assert one.status == two.status == "ok" and len(partial) == 1 and not two.partial
    assert [t.name for t in two.tensors] == [t.name for t in one.tensors]
    for a, b in zip(two.tensors, one.tensors):
        assert a.value.tobytes() == b.value.tobytes(), a.name
        assert sorted(a.grads) == sorted(b.grads) == ["custom", "default"], a.name  # numeric:
        for mode in a.grads:  # projections
            assert a.grads[mode].tobytes() == b.grads[mode].tobytes(), (a.name, mode)
        assert a.numeric.projections.keys() == b.numeric.projections.keys()
        for k in a.numeric.projections:
            np.testing.assert_array_equal(a.numeric.projections[k], b.numeric.projections[k])


LAYER = """
    import keras
    import tensorflow as tf


    @tf.custom_gradient
    def times(x, scale):
        def grad(up):
            return up * scale, up * x
        return x * scale, grad


    class BigScale(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.scale = self.add_weight(name="scale", shape=(300_000,), initializer="zeros")

        def call(self, x):
            return times(x, tf.convert_to_tensor(self.scale))
"""


def test_big_layer_parameter_values_and_gradients_are_exact(engine, write_module):
    """A Keras variable's values are copied out (set_param of the next mode assigns to it); its
    big gradient is not copied, and each mode keeps its own."""
    path = write_module("big_scale.py", LAYER)
    settings = RunSettings(shape=BIG, modes=("default", "custom"), seed=3, timeout=300)
    [res] = engine.run([RunRequest(path, "BigScale", "tf", settings)])
    assert res.status == "ok", res.error
    got = {t.name: t for t in res.tensors}
    x = input_values(3, "x", BIG).astype(np.float32)
    scale = param_values(3, "scale", BIG).astype(np.float32)
    assert got["scale"].role == "param"
    assert got["scale"].value.tobytes() == scale.tobytes()
    assert got["out"].value.tobytes() == (x * scale).tobytes()
    for mode in ("custom", "default"):  # upstream ones
        assert got["scale"].grads[mode].tobytes() == x.tobytes(), mode
        assert got["x"].grads[mode].tobytes() == scale.tobytes(), mode


def test_host_arrays_share_aligned_buffers_and_cast_like_tf_constant():
    """In a process of its own (TensorFlow is imported only in workers)."""
    code = textwrap.dedent("""
        import numpy as np
        import tensorflow as tf
        from gradviz.backends.tf_arrays import ALIGN, HostArrays, aligned_cast, host_array

        rng = np.random.default_rng(0)
        # cast like tf.constant(x, dtype=...), subnormals, overflow and NaN included
        wide = rng.standard_normal(400_000) * 10.0 ** rng.integers(-45, 40, 400_000)
        wide[:4] = [1e-40, np.nan, np.inf, 1e39]
        with np.errstate(over="ignore"):
            for dtype in (tf.float32, tf.float64):
                for n in (1, 7, 262_145, 400_000):
                    arr = aligned_cast(wide[:n], dtype.as_numpy_dtype)
                    assert arr.ctypes.data % ALIGN == 0, (n, arr.ctypes.data)
                    want = tf.constant(wide[:n], dtype=dtype).numpy()
                    assert arr.tobytes() == want.tobytes(), (dtype, n)

        arrays = HostArrays()
        big, small = wide[4:400_000], wide[4:1000]
        with np.errstate(over="ignore"):
            a, b = arrays.tensor(big, tf.float32, "/CPU:0"), arrays.tensor(big, tf.float32, "/CPU:0")
            # one cast shared by both tensors (the two modes of a run), usable by TF's kernels
            assert np.shares_memory(host_array(a), host_array(b))
            assert host_array(a).ctypes.data % ALIGN == 0
            want = (tf.constant(big, dtype=tf.float32) * 2.0).numpy()   # TF flushes subnormals
            assert (a * 2.0).numpy().tobytes() == want.tobytes()
            c = arrays.tensor(big, tf.float64, "/CPU:0")
            assert not np.shares_memory(host_array(a), host_array(c))
            assert host_array(c).tobytes() == big.tobytes()
            # small arrays and other devices: tf.constant's own copy, as before
            s1, s2 = arrays.tensor(small, tf.float32, "/CPU:0"), arrays.tensor(small, tf.float32, "/CPU:0")
            assert not np.shares_memory(host_array(s1), host_array(s2))
            assert host_array(s1).tobytes() == small.astype(np.float32).tobytes()
            assert not np.shares_memory(host_array(arrays.tensor(big, tf.float32, "/GPU:0")),
                                        host_array(a))

        # an eager tensor's values come back without a copy; a variable's are copied
        t = tf.constant(big) * 1.0
        assert np.shares_memory(host_array(t), host_array(t))
        v = tf.Variable(big)
        before = host_array(v)
        v.assign(big * 2.0)
        assert before.tobytes() == big.tobytes()
        print("OK")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-4000:]
