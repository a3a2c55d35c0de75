"""The TensorFlow part of a reproduction script: the custom and default modes as gradviz's TF
backend runs them (a tape's gradient; the default with every user @tf.custom_gradient running
its undecorated forward, as tf_overrides removes them), and the float64 loss of the custom
forward that the numeric part differentiates."""

TF = '''
import contextlib

import tensorflow as tf
from tensorflow.python.ops import custom_gradient as _cg

FRAMEWORK = "tf"
_built64 = {}
_FRAMEWORK_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                        for m in (tf, _cg) if getattr(m, "__file__", None))


class K:
    """The graphs' tensor functions (gradviz's TF F)."""
    total = staticmethod(tf.reduce_sum)
    mean = staticmethod(tf.reduce_mean)

    @staticmethod
    def weighted_sum(w, t):
        return tf.reduce_sum(w * t)

    @staticmethod
    def dense(x, w, b):
        return tf.tensordot(x, w, axes=[[len(x.shape) - 1], [0]]) + b

    @staticmethod
    def const(arr, like):
        return tf.constant(np.asarray(arr), dtype=like.dtype)


@contextlib.contextmanager
def custom_gradients_as_default():
    """Within: every @tf.custom_gradient function outside TensorFlow's own code runs its
    undecorated forward f(x)[0], wherever it is defined or called from."""
    eager, graph = _cg._eager_mode_decorator, _cg._graph_mode_decorator

    def as_default(original):
        def decorator(f, args, kwargs):
            code = getattr(getattr(f, "__func__", f), "__code__", None)
            if code is not None and os.path.abspath(code.co_filename).startswith(_FRAMEWORK_DIRS):
                return original(f, args, kwargs)
            return f(*args, **kwargs)[0]
        return decorator
    _cg._eager_mode_decorator, _cg._graph_mode_decorator = as_default(eager), as_default(graph)
    # a tf.function keeps what it traced (the custom run's gradients): run its Python eagerly
    # here (gradviz traces a twin of it instead; the same numbers)
    was_eager = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        _cg._eager_mode_decorator, _cg._graph_mode_decorator = eager, graph
        tf.config.run_functions_eagerly(was_eager)


def mode_call(op, module, mode):
    if mode == "custom":
        return op, None
    if USES_REFERENCE:
        return reference_of(op, module), None
    return op, custom_gradients_as_default()


def gradients(mode):
    """Every tensor's gradient of the loss in `mode`, as numpy (None where there is none)."""
    op, module = load_op()
    dtype = getattr(tf, RUN_DTYPE)
    if KIND == "layer":
        fn, named, scope = layer_call(op, module, mode)
    else:
        (fn, scope), named = mode_call(op, module, mode), {}
    recorded = {}

    def rec(name, t):
        recorded[name] = t
        return t
    with tf.device(DEVICE), scope or contextlib.nullcontext():
        leaves = {n: tf.constant(v, dtype=dtype if v.dtype.kind == "f" else None)
                  for n, v in LEAVES.items()}
        with tf.GradientTape(persistent=True) as tape:
            for n, t in leaves.items():
                if LEAVES[n].dtype.kind == "f":
                    tape.watch(t)
            loss = graph_loss(fn, leaves, rec, K)
        got = {n: t for n, t in leaves.items() if LEAVES[n].dtype.kind == "f"}
        got.update(recorded)
        got.update({n: getattr(v, "value", v) for n, v in named.items()})   # Keras 3: its tf.Variable
        grads = tape.gradient(loss, got)
    return {n: tf.convert_to_tensor(g).numpy() for n, g in grads.items() if g is not None}


def loss64(leaves, params, inject=None):
    """The float64 loss of the custom forward at `leaves`, with inject = (name, delta) added
    to that recorded tensor."""
    op, _ = load_op()
    if KIND == "layer":
        op = _built64.get("layer") or _built64.setdefault(
            "layer", build_layer(op, "float64", PARAMS64, plain=False))
        for n, v in named_variables(op, list(op.trainable_variables)).items():
            v.assign(params[n])

    def rec(name, t):
        if inject is not None and name == inject[0]:
            return t + tf.constant(inject[1], dtype=tf.float64)
        return t
    with tf.device(DEVICE):
        tensors = {n: tf.constant(v, dtype=tf.float64 if v.dtype.kind == "f" else None)
                   for n, v in leaves.items()}
        return float(graph_loss(op, tensors, rec, K))
'''
