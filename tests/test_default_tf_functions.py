"""TensorFlow's default mode through tf.functions (backends/tf_overrides.py): a custom_gradient
called inside a tf.function is removed for the default column however the function was traced
before, a default run never leaves a trace that later custom runs reuse, and a graph traced
beforehand that still holds the custom gradient leaves the default column absent with the
reason instead of repeating custom."""

import textwrap
import uuid

import numpy as np
from op_runs import run, verdicts

from gradviz.model import OVERRIDE_KEPT, RunSettings

CUSTOM = RunSettings(modes=("custom",))
DEFAULT = RunSettings(modes=("default",))
BOTH = RunSettings(modes=("custom", "default"))
ALL = RunSettings()  # and numeric, which the verdict reads where default is absent
N = 200

OPS = """\
    import tensorflow as tf
    from tensorflow import keras


    @tf.custom_gradient
    def sign_ste(v):
        # straight-through: custom gradient ones; TF's own gradient of sign is zeros
        return tf.sign(v), lambda dy: dy


    @tf.custom_gradient
    def round_ste(v):
        # TF's own gradient of round is None (no gradient path)
        return tf.round(v), lambda dy: dy


    @tf.function
    def quantize(v):
        return sign_ste(v)


    @tf.function
    def quantize_round(v):
        return round_ste(v)


    @tf.function
    def outer(v):
        return quantize(v) * 1.0


    # one per dtype: the numeric reference runs the op in float64
    concrete = {d: quantize.get_concrete_function(tf.TensorSpec([None], d))
                for d in (tf.float32, tf.float64)}
    _cache = {}


    @tf.function
    def around_concrete(v):
        return outer(concrete[v.dtype](v))   # a traced graph inside the twin's trace


    def lazily_concrete(v):
        cf = _cache.get(v.dtype)
        if cf is None:
            cf = _cache[v.dtype] = quantize_lazy.get_concrete_function(
                tf.TensorSpec([None], v.dtype))
        return cf(v)


    @tf.function
    def quantize_lazy(v):
        return sign_ste(v)


    @tf.RegisterGradient(__name__ + "_sign")   # the module's own name: registered once per file
    def _sign_as_identity(op, dy):
        return dy


    @tf.function
    def overridden(v):
        with tf.compat.v1.get_default_graph().gradient_override_map({"Sign": __name__ + "_sign"}):
            return tf.sign(v)


    # TensorFlow's own custom gradient: its grad runs the forward again, sign_ste included
    recomputed = tf.recompute_grad(lambda v: sign_ste(v) * 1.0)


    class Sign(keras.layers.Layer):
        def call(self, x):
            return quantize(x)


    class Round(keras.layers.Layer):
        def call(self, x):
            return quantize_round(x)


    class Nested(keras.layers.Layer):
        def call(self, x):
            return outer(x)


    class Method(keras.layers.Layer):
        @tf.function
        def call(self, x):
            return sign_ste(x)


    class Concrete(keras.layers.Layer):
        def call(self, x):
            return concrete[x.dtype](x)


    class AroundConcrete(keras.layers.Layer):
        def call(self, x):
            return around_concrete(x)


    class Recomputed(keras.layers.Layer):
        def call(self, x):
            return recomputed(x)


    class Overridden(keras.layers.Layer):
        def call(self, x):
            return overridden(x)


    class Lazy(keras.layers.Layer):
        def call(self, x):
            return lazily_concrete(x)
"""


def _ops(tmp_path) -> str:
    path = tmp_path / f"tf_fn_ops_{uuid.uuid4().hex[:8]}.py"  # a fresh module: fresh traces
    path.write_text(textwrap.dedent(OPS))
    return str(path)


def _custom_ones(engine, path, qualname, times=3):
    for _ in range(times):
        res = run(engine, path, qualname, "tf", CUSTOM)
        np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.ones(N))


def _default_zeros(res):
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["default"], np.zeros(N))
    assert "default" not in x.absent


def _default_kept(res, name="sign_ste"):
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], np.ones(N))
    assert "default" not in x.grads
    assert x.absent["default"].startswith(OVERRIDE_KEPT) and name in x.absent["default"]
    assert verdicts(res)["x"] != "match"


def test_tf_function_traced_in_the_custom_mode_gets_the_real_default(engine, tmp_path):
    path = _ops(tmp_path)
    for qualname in ("Sign", "Nested", "Method", "Recomputed"):
        for _ in range(2):  # the second run reuses every trace the first one made
            res = run(engine, path, qualname, "tf", BOTH)
            np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.ones(N))
            _default_zeros(res)
            assert verdicts(res)["x"] == "surrogate"
        _custom_ones(engine, path, qualname, times=1)


def test_tf_function_around_a_gradient_tf_does_not_define_gives_none(engine, tmp_path):
    res = run(engine, _ops(tmp_path), "Round", "tf", BOTH)
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], np.ones(N))
    assert "default" not in x.grads  # None, as TF says: not zeros
    assert "returned None" in x.absent["default"]
    assert not x.absent["default"].startswith(OVERRIDE_KEPT)


def test_tf_function_first_traced_in_a_default_run_stays_custom_afterwards(engine, tmp_path):
    path = _ops(tmp_path)
    for qualname in ("Sign", "Nested", "Method"):
        _default_zeros(run(engine, path, qualname, "tf", DEFAULT))
        _custom_ones(engine, path, qualname)
        both = run(engine, path, qualname, "tf", BOTH)
        np.testing.assert_array_equal(both.tensor("x").grads["custom"], np.ones(N))
        _default_zeros(both)


def test_concrete_function_traced_beforehand_leaves_default_absent(engine, tmp_path):
    path = _ops(tmp_path)
    for qualname in ("Concrete", "AroundConcrete"):
        for _ in range(2):  # the second run reuses the twin's trace and what was read of it
            _default_kept(run(engine, path, qualname, "tf", ALL))
        _custom_ones(engine, path, qualname)


def test_concrete_function_cached_in_a_default_run_keeps_the_custom_gradient(engine, tmp_path):
    # filled on first use inside the default run: gradviz traces it with the user's gradient,
    # so what the cache keeps is right for custom runs, and the default column says why not
    path = _ops(tmp_path)
    res = run(engine, path, "Lazy", "tf", DEFAULT)
    assert all("default" not in t.grads for t in res.tensors)
    _custom_ones(engine, path, "Lazy")
    _default_kept(run(engine, path, "Lazy", "tf", ALL))
    _custom_ones(engine, path, "Lazy", times=1)


def test_gradient_override_map_in_a_tf_function_leaves_default_absent(engine, tmp_path):
    path = _ops(tmp_path)
    for _ in range(2):
        _default_kept(run(engine, path, "Overridden", "tf", ALL), "gradient_override_map")
    _custom_ones(engine, path, "Overridden", times=1)


SAVED = """\
    import os

    import tensorflow as tf
    from tensorflow import keras


    @tf.custom_gradient
    def sign_ste(v):
        return tf.sign(v), lambda dy: dy


    class _Quantizer(tf.Module):
        @tf.function
        def __call__(self, v):
            return sign_ste(v)


    _q = _Quantizer()
    for _dtype in (tf.float32, tf.float64):   # float64: the numeric reference's
        _q.__call__.get_concrete_function(tf.TensorSpec([None], _dtype))
    _where = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quantizer")
    tf.saved_model.save(_q, _where,
                        options=tf.saved_model.SaveOptions(experimental_custom_gradients=True))
    quantizer = tf.saved_model.load(_where)


    class Loaded(keras.layers.Layer):
        def call(self, x):
            return quantizer(x)
"""


def test_custom_gradient_loaded_with_a_saved_model_leaves_default_absent(engine, tmp_path):
    path = tmp_path / f"tf_saved_{uuid.uuid4().hex[:8]}.py"
    path.write_text(textwrap.dedent(SAVED))
    for _ in range(2):
        _default_kept(run(engine, path, "Loaded", "tf", ALL), "SavedModel")
    _custom_ones(engine, path, "Loaded", times=1)


WRAPPED = """\
    import tensorflow as tf


    @tf.function
    @tf.custom_gradient
    def half_square(v):
        # the factor 2 forgotten: TF's own gradient is 2 v
        return v * v, lambda dy: dy * v


    @tf.function
    @tf.custom_gradient
    def round_ste(v):
        return tf.round(v), lambda dy: dy
"""


def test_a_tf_function_around_a_custom_gradient_is_an_op_with_its_own_default(engine, write_module):
    """@tf.function on top of @tf.custom_gradient was not found at all; found, its default
    column is TF's own gradient (the tf.function's twin without the override), not custom's."""
    path = write_module(f"wrapped_{uuid.uuid4().hex}.py", textwrap.dedent(WRAPPED))
    [cat] = [c for c in engine.load([path]) if c.framework == "tf"]
    kinds = {op.qualname: (op.kind, op.line) for op in cat.ops}
    assert kinds == {"half_square": ("custom_gradient", 6), "round_ste": ("custom_gradient", 13)}
    res = run(engine, path, "half_square", "tf", BOTH)
    v = res.tensor("v")
    np.testing.assert_allclose(v.grads["custom"], v.value)
    np.testing.assert_allclose(v.grads["default"], 2 * v.value, rtol=1e-6)
    assert verdicts(res)["v"] == "differs"
    ste = run(engine, path, "round_ste", "tf", ALL)
    np.testing.assert_array_equal(ste.tensor("v").grads["custom"], np.ones(N))
    assert "default" in ste.tensor("v").absent and verdicts(ste)["v"] == "surrogate"
