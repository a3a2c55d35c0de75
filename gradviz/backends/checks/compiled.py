"""compiled: the custom gradient under a compiler equals the eager one. torch: torch.compile
with the "aot_eager" backend (AOTAutograd traces forward and backward, no code generation, so it
is cheap and needs no C compiler), whole graph first; TF: tf.function around the tape; JAX:
jax.jit around jax.grad (two calls of one trace, as TF: Python state a rule reads is frozen at
the trace)."""

from __future__ import annotations

from dataclasses import replace

from gradviz.backends.checks import outcome
from gradviz.backends.checks.float64_witness import unless_rounding
from gradviz.backends.checks.outcome import brief, compare, failed, passed, skipped
from gradviz.backends.user_code import error_info
from gradviz.compare.metrics import tolerances
from gradviz.model import CheckResult
from gradviz.vocab import ErrorKind

NAME = "compiled"
TORCH_BACKEND = "aot_eager"
_FIX = (
    "Keep the gradient in framework ops: no .numpy(), .item(), Python side effects "
    "(printing, counters, lists, random) or Python branches on tensor values in it; a "
    "compiler traces them once and bakes the result in, or refuses."
)


_FIX_CUSTOM_OP = (
    "Give the custom op a fake (meta) implementation with @op.register_fake, "
    "returning empty tensors of the output's shape and dtype: torch.compile traces "
    "the op with fake tensors and cannot run its body on them."
)


def _raised(ctx, exc, during: str, fix: str = _FIX, first_line: bool = False):
    err = error_info(exc, ErrorKind.ERROR, ctx.backward_where())
    text = brief(outcome.first_line(err.message) if first_line else err.message)
    if ctx.info.kind == "custom_op" and "fake" in err.message.lower():
        fix = _FIX_CUSTOM_OP
    return failed(NAME, "raised", f"{during} raised {err.type}: {text}", err.where, fix)


def _checked(ctx, run):
    if not ctx.tensor_plans():
        return skipped(NAME, f"{ctx.info.name} takes no tensor argument")
    return unless_rounding(ctx, lambda dtype: run(ctx, dtype))


def torch_check(ctx):
    return _checked(ctx, _torch)


def _torch(ctx, dtype: str):
    from gradviz.backends.checks import torch_compile_kept as K
    from gradviz.backends.checks import torch_ops as T

    built = ctx.build("custom", dtype)
    xs = T.leaves(ctx, dtype)
    outs = T.call(ctx, built, xs)
    if not outs:
        return skipped(NAME, T.no_outputs(ctx))
    ups = T.upstreams(ctx, outs)
    eager = [T.numpy(g) for g in T.training_grads(outs, list(xs.values()), ups)]
    names = list(xs)

    # what the call needs and no more: a kept compile holds its closure (the run's arrays, in
    # ctx and the plans' values, would stay alive with it)
    call = T.call_of([replace(p, values=None) for p in ctx.plans], built)

    def run(*a):
        return tuple(call(dict(zip(names, a))))

    def compiled_grads(fn):
        leaves = T.leaves(ctx, dtype)
        outs = list(fn(*leaves.values()))
        return [T.numpy(g) for g in T.training_grads(outs, list(leaves.values()), ups)]

    key = K.key_of(ctx, dtype, tuple((n, tuple(x.shape)) for n, x in xs.items()))
    kept = K.find(ctx, key)
    got = None
    if kept is not None:  # compiled in an earlier run of this op: Dynamo's guards decide
        try:
            got, note = compiled_grads(kept.fn), kept.note
        except Exception:  # noqa: BLE001 - compiled afresh below, which says what it raises
            K.drop_all()
    if got is None:
        fresh = _compile_fresh(ctx, run, compiled_grads, key)
        if isinstance(fresh, CheckResult):  # it raised
            return fresh
        got, note = fresh
    tol = tolerances(dtype, numeric=True)  # compilers reorder float arithmetic
    for name, a, b in zip(names, got, eager):
        if (a is None) != (b is None):
            return failed(
                NAME,
                "differs",
                f"under torch.compile the gradient of {name} is "
                f"{'missing' if a is None else 'present'}, unlike eager",
                ctx.backward_where(),
                _FIX,
            )
        if a is not None:
            ok, detail = compare(a, b, tol)
            if not ok:
                return failed(
                    NAME,
                    "differs",
                    f"torch.compile(backend={TORCH_BACKEND!r}) "
                    f"gives another gradient for {name} than eager: {detail}",
                    ctx.backward_where(),
                    _FIX,
                )
    return passed(
        NAME, f"torch.compile(backend={TORCH_BACKEND!r}) gives the eager custom gradient{note}"
    )


def _compile_fresh(ctx, run, compiled_grads, key):
    """(gradients, graph-break note) of `run` compiled now, whole graph first, and kept for the
    op's next runs where `key` allows (torch_compile_kept); or the check's failure."""
    import torch

    from gradviz.backends.checks import torch_compile_kept as K

    def compile_(fullgraph: bool):
        fn = torch.compile(
            K.own_code(run), backend=TORCH_BACKEND, fullgraph=fullgraph, dynamic=False
        )
        return fn, compiled_grads(fn)

    if key is None:
        K.drop_all()  # a Module is built afresh: nothing of an earlier trace applies
    note = ""
    try:
        try:
            fn, got = compile_(fullgraph=True)
        except Exception as exc:  # noqa: BLE001 - a graph break: try with breaks allowed
            note = (
                f"; it does not compile as one graph (graph break: "
                f"{_first_line(exc)}), so part of it runs eagerly"
            )
            try:
                fn, got = compile_(fullgraph=False)
            except Exception as exc2:  # noqa: BLE001
                key = None
                return _raised(ctx, exc2, f"torch.compile(backend={TORCH_BACKEND!r})")
    finally:
        if key is None:
            K.drop_all()  # the user's module is reloaded fresh next run: drop its code
    if key is not None:
        K.keep(ctx, key, fn, note)
    return got, note


def _first_line(exc) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def tf_check(ctx):
    return _checked(ctx, _tf)


# TF: an op's tf.function kept between runs of a worker, as torch's compile is (a custom_gradient
# function holds no state; a Layer is built afresh each run): (file, qualname, key) -> (the
# user's function, its tf.function)
_TF_KEPT: dict[tuple, tuple] = {}


def _tf(ctx, dtype_name: str):
    import tensorflow as tf

    from gradviz.backends.checks import torch_compile_kept as K

    built = ctx.build("custom", dtype_name)
    dtype = {"float32": tf.float32, "float64": tf.float64}[dtype_name]
    values = ctx.arg_values()
    names = list(values)
    slim = K.slim(ctx)  # what the trace holds; it bakes in the upstream (the settings: keyed)

    def step(*xs):
        return slim.tf_grads(built, names, xs)

    shapes = tuple((n, tuple(v.shape)) for n, v in values.items())
    key = K.key_of(ctx, dtype_name, shapes, ("custom_gradient",), (repr(ctx.settings),))
    where = (ctx.info.file, ctx.info.qualname, key)
    kept = _TF_KEPT.get(where) if key is not None else None
    graph_fn = kept[1] if kept is not None and kept[0] is ctx.obj else None
    with tf.device(ctx.device):
        xs = [tf.constant(values[n], dtype) for n in names]
        eager = step(*xs)
        try:
            if graph_fn is None:
                graph_fn = tf.function(step, autograph=False)
                if key is not None:
                    K.keep_in(_TF_KEPT, where, (ctx.obj, graph_fn))
            got = graph_fn(*xs)
            got_again = graph_fn(*xs)  # a second call: state kept in Python shows up here
        except Exception as exc:  # noqa: BLE001 - the framework's refusal is the finding
            _TF_KEPT.pop(where, None)
            return _raised(ctx, exc, "tf.function around the tape")
    pairs = [[a.numpy() for a in g] for g in (got, got_again, eager)]
    return _twice_as_eager(ctx, names, *pairs, dtype_name, "tf.function", _FIX)


def jax_check(ctx):
    return _checked(ctx, _jax)


def _jax(ctx, dtype: str):
    import jax

    from gradviz.backends.checks import jax_ops as J

    built = ctx.build("custom", dtype)
    with J.scope(ctx, dtype):
        xs = J.arrays(ctx, dtype)
        names = list(xs)
        probe = J.outputs(ctx, built, xs)
        if not probe:
            return skipped(
                NAME, f"{ctx.info.name} returns no float output: nothing to differentiate"
            )
        grad = J.grad_fn(ctx, built, names, J.upstreams(ctx, probe))
        eager = grad(*xs.values())
        try:
            jitted = jax.jit(grad)
            got = jitted(*xs.values())
            got_again = jitted(*xs.values())  # the trace reused: Python state stays as traced
        except Exception as exc:  # noqa: BLE001 - JAX's refusal is the finding
            return _raised(ctx, exc, "jax.jit(jax.grad(op))", J.FIX_TRACED, first_line=True)
    pairs = [[J.numpy(a) for a in g] for g in (got, got_again, eager)]
    return _twice_as_eager(ctx, names, *pairs, dtype, "jax.jit", J.FIX_TRACED)


def _twice_as_eager(ctx, names, got, got_again, eager, dtype: str, what: str, fix: str):
    """Two calls of one compiled trace against the eager gradients."""
    tol = tolerances(dtype, numeric=True)  # compilers reorder and fuse float arithmetic
    for k, name in enumerate(names):
        for label, g in (("", got[k]), (" on a second call", got_again[k])):
            ok, detail = compare(g, eager[k], tol)
            if not ok:
                return failed(
                    NAME,
                    "differs",
                    f"{what} gives another gradient for {name}{label} than eager: {detail}",
                    ctx.backward_where(),
                    fix,
                )
    return passed(NAME, f"{what} gives the eager custom gradient (two calls of one trace)")
