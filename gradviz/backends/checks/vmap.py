"""vmap: per-sample gradients of a batch (torch.func.vmap over torch.func.grad, and jacrev; TF
tf.vectorized_map over a tape; JAX jax.vmap over jax.grad, and jax.jacrev: jax_vmap.py) must
equal the gradients of each sample run alone."""

from __future__ import annotations

import numpy as np

from gradviz.backends.checks.float64_witness import unless_rounding
from gradviz.backends.checks.outcome import brief, compare, failed, passed, skipped
from gradviz.backends.user_code import error_info
from gradviz.compare.metrics import tolerances
from gradviz.model import CheckResult
from gradviz.vocab import CheckStatus, ErrorKind

NAME = "vmap"
SAMPLES = 3
JACOBIAN_MAX = 250_000  # elements of a Jacobian jacrev may build
_FIX_SETUP = (
    "Split forward(ctx, ...) into forward(...) without ctx plus a staticmethod "
    "setup_context(ctx, inputs, output) that saves what backward needs; torch.func "
    "transforms need that form."
)
_FIX_RULE = (
    "Set generate_vmap_rule = True on the Function (its forward and backward must then "
    "use only torch ops), or write a vmap staticmethod."
)
_FIX_DATA = (
    "Keep forward and backward in tensor ops: no .item(), .tolist(), .numpy() or "
    "Python branches on tensor values; they cannot be batched."
)
_FIX_DIFFERS = (
    "A batched call must treat each sample independently: check reductions over "
    "the batch dimension, and a vmap staticmethod's out_dims."
)


def _classify(text: str):
    if "setup_context" in text:
        return "setup_context", "the Function has no setup_context staticmethod", _FIX_SETUP
    if "generate_vmap_rule" in text or "vmap support" in text:
        return (
            "vmap_rule",
            "the Function has neither generate_vmap_rule = True nor a vmap staticmethod",
            _FIX_RULE,
        )
    if any(
        k in text for k in (".item()", "data-dependent", "data pointer", "numpy", "Numpy", "tolist")
    ):
        return "data_dependent", "the op reads tensor values in Python (.item(), numpy)", _FIX_DATA
    return "raised", "", _FIX_DATA


_FIX_CUSTOM_OP = (
    "torch.func's grad and vmap do not go through a custom op's registered "
    "autograd (register_vmap does not change that here): for per-sample gradients "
    "write the op as an autograd.Function with setup_context and a vmap rule, or "
    "call torch.autograd.grad per sample."
)


def _fail_raised(ctx, exc, during: str):
    err = error_info(exc, ErrorKind.ERROR, ctx.info.where)
    kind, why, fix = _classify(err.message)
    if ctx.info.kind == "custom_op" and kind in ("setup_context", "vmap_rule"):
        # torch wraps a custom op's autograd in an autograd.Function of its own: its advice
        # about setup_context is not the user's to follow
        kind, why, fix = (
            "vmap_rule",
            "torch.func does not transform a custom op's registered autograd",
            _FIX_CUSTOM_OP,
        )
    text = brief(err.message)
    return failed(
        NAME,
        kind,
        f"{during} raised{': ' + why if why else ''} ({err.type}: {text})",
        err.where,
        fix,
    )


# torch.func refuses a Function written in the older style (forward(ctx, ...), no vmap rule): the
# op is right for plain training, and a fail is a vmap that runs and gives other gradients, so
# this is a skip that spells out the port (GV731 / GV732 as notes).
_NOT_PORTED = ("setup_context", "vmap_rule")


def _not_ported(ctx, result, note: str) -> CheckResult:
    if ctx.info.kind == "custom_op":
        return CheckResult(
            NAME, CheckStatus.SKIP, result.message + note, result.where, result.fix, result.kind
        )
    fn = ctx.obj.__name__ if ctx.info.kind == "function" else "the autograd.Function it applies"
    if result.kind == "setup_context":
        why = (
            f"{fn} has the older forward(ctx, ...) form, which torch.func (vmap, grad, jacrev) "
            "does not transform; plain training is not affected"
        )
        port = (
            f"To batch it with torch.func, port {fn}: write forward(x, ...) without ctx; add "
            "a @staticmethod setup_context(ctx, inputs, output) that unpacks "
            "`x, ... = inputs` and does what forward did with ctx (ctx.save_for_backward(x), "
            "ctx.k = k); set generate_vmap_rule = True on the class (or write a vmap "
            "staticmethod); backward(ctx, grad) stays as it is."
        )
    else:
        why = (
            f"{fn} has setup_context but neither generate_vmap_rule = True nor a vmap "
            "staticmethod, so torch.func.vmap cannot batch it; plain training is not affected"
        )
        port = (
            f"Set generate_vmap_rule = True on {fn} (its forward, setup_context and backward "
            "must then use only torch ops), or write a vmap staticmethod."
        )
    where = ctx.forward_where() if ctx.info.kind == "function" else ctx.info.where
    return CheckResult(NAME, CheckStatus.SKIP, f"{why}{note}. {port}", where, port, result.kind)


def torch_check(ctx):
    if not ctx.tensor_plans():
        return skipped(NAME, f"{ctx.info.name} takes no tensor argument to batch")
    return unless_rounding(ctx, lambda dtype: _torch(ctx, dtype))


def _torch(ctx, dtype: str):
    import torch

    from gradviz.backends.checks import torch_ops as T

    built = ctx.build("custom", dtype)
    samples = [T.leaves(ctx, dtype, variant=k) for k in range(SAMPLES)]
    names = list(samples[0])
    probe = T.call(ctx, built, samples[0])
    if not probe:
        return skipped(NAME, T.no_outputs(ctx))
    ups = [u for u in T.upstreams(ctx, probe)]

    def loss(*xs):
        outs = T.call(ctx, built, dict(zip(names, xs)))
        return sum((u * o).sum() for u, o in zip(ups, outs))

    alone = [
        [T.numpy(g) for g in T.training_grads(T.call(ctx, built, s), list(s.values()), ups)]
        for s in samples
    ]
    stacked = [torch.stack([s[n].detach() for s in samples]) for n in names]
    argnums = tuple(range(len(names)))
    try:
        batched = torch.func.vmap(torch.func.grad(loss, argnums=argnums))(*stacked)
    except Exception as exc:  # noqa: BLE001 - the framework's refusal is the finding
        note = _jacrev_note(ctx, built, samples[0], names, probe)
        result = _fail_raised(ctx, exc, "torch.func.vmap(torch.func.grad(op))")
        if result.kind in _NOT_PORTED:
            return _not_ported(ctx, result, note)
        return failed(NAME, result.kind, result.message + note, result.where, result.fix)
    tol = tolerances(dtype, numeric=True)  # batched kernels reorder float arithmetic
    for k, name in enumerate(names):
        for b in range(SAMPLES):
            ok, detail = compare(
                T.numpy(batched[k][b]), _zeros_if_none(alone[b][k], stacked[k][b]), tol
            )
            if not ok:
                return failed(
                    NAME,
                    "differs",
                    f"vmap's per-sample gradient of {name} (sample "
                    f"{b}) differs from the sample run alone: {detail}",
                    ctx.backward_where(),
                    _FIX_DIFFERS,
                )
    jac = _jacrev(ctx, built, samples[0], names, probe, ups, alone[0], tol)
    if jac is not None and jac.status == CheckStatus.FAIL:
        return jac
    jac_text = jac.message if jac is not None else "jacrev skipped (Jacobian too large)"
    return passed(
        NAME,
        f"torch.func.vmap of grad over {SAMPLES} samples gives each sample's own "
        f"gradient; {jac_text}",
    )


def _zeros_if_none(g, like):
    return np.zeros(tuple(like.shape)) if g is None else g


def _jacobian_size(probe, xs) -> int:
    return int(probe[0].numel()) * sum(int(x.numel()) for x in xs)


def _jacrev(ctx, built, sample, names, probe, ups, alone, tol):
    import torch

    from gradviz.backends.checks import torch_ops as T

    xs = [sample[n].detach() for n in names]
    if _jacobian_size(probe, xs) > JACOBIAN_MAX:
        return None

    def first_out(*a):
        return T.call(ctx, built, dict(zip(names, a)))[0]

    try:
        jac = torch.func.jacrev(first_out, argnums=tuple(range(len(xs))))(*xs)
    except Exception as exc:  # noqa: BLE001
        return _fail_raised(ctx, exc, "torch.func.jacrev(op)")
    if len(probe) > 1:
        return passed(NAME, "jacrev runs (several outputs: its values were not compared)")
    up = ups[0]
    for k, name in enumerate(names):
        vjp = torch.tensordot(up, jac[k], dims=up.dim())
        ok, detail = compare(T.numpy(vjp), _zeros_if_none(alone[k], xs[k]), tol)
        if not ok:
            return failed(
                NAME,
                "differs",
                f"upstream x jacrev's Jacobian for {name} differs "
                f"from the custom gradient: {detail}",
                ctx.backward_where(),
                _FIX_DIFFERS,
            )
    return passed(NAME, "upstream x jacrev's Jacobian equals the custom gradient")


def _jacrev_note(ctx, built, sample, names, probe) -> str:
    xs = [sample[n].detach() for n in names]
    if _jacobian_size(probe, xs) > JACOBIAN_MAX:
        return ""
    import torch

    from gradviz.backends.checks import torch_ops as T

    try:
        torch.func.jacrev(
            lambda *a: T.call(ctx, built, dict(zip(names, a)))[0], argnums=tuple(range(len(xs)))
        )(*xs)
        return "; torch.func.jacrev over the op works"
    except Exception:  # noqa: BLE001
        return "; torch.func.jacrev fails too"


def tf_check(ctx):
    if not ctx.tensor_plans():
        return skipped(NAME, f"{ctx.info.name} takes no tensor argument to batch")
    return unless_rounding(ctx, lambda dtype: _tf(ctx, dtype))


# an op's batched gradient as a tf.function, kept between runs of a worker as the compiled
# check's is (compiled._keep_tf: a custom_gradient function holds no state): eager
# tf.vectorized_map converts the gradient anew each call. (file, qualname, key) -> (the user's
# function, the tf.function, its note)
_TF_KEPT: dict[tuple, tuple] = {}


def _tf(ctx, dtype_name: str):
    import tensorflow as tf

    from gradviz.backends.checks import torch_compile_kept as K

    built = ctx.build("custom", dtype_name)
    dtype = {"float32": tf.float32, "float64": tf.float64}[dtype_name]
    samples = [ctx.arg_values(variant=k) for k in range(SAMPLES)]
    names = list(samples[0])
    slim = K.slim(ctx)  # what a kept trace holds: no run arrays

    def grads(xs):
        return slim.tf_grads(built, names, xs)

    def batched_fn(fallback: bool):
        return tf.function(
            lambda *st: tf.vectorized_map(
                lambda xs: grads(list(xs)), st, fallback_to_while_loop=fallback
            ),
            autograph=False,
        )

    shapes = tuple((n, tuple(np.shape(samples[0][n]))) for n in names)
    key = K.key_of(ctx, dtype_name, shapes, ("custom_gradient",), (repr(ctx.settings),))
    where = (ctx.info.file, ctx.info.qualname, key)
    kept = _TF_KEPT.get(where) if key is not None else None
    with tf.device(ctx.device):
        alone = [
            [g.numpy() for g in grads([tf.constant(s[n], dtype) for n in names])] for s in samples
        ]
        stacked = [tf.constant(np.stack([s[n] for s in samples]), dtype) for n in names]
        batched = None
        if kept is not None and kept[0] is ctx.obj:
            try:
                batched, note = kept[1](*stacked), kept[2]
            except Exception:  # noqa: BLE001 - converted afresh below, which says what it raises
                _TF_KEPT.pop(where, None)
        if batched is None:
            note, fn = "", batched_fn(False)
            try:
                batched = fn(*stacked)
            except Exception as exc:  # noqa: BLE001 - try the slow path before calling it a failure
                why = " ".join(str(exc).split())[:160]
                fn = batched_fn(True)
                try:
                    batched = fn(*stacked)
                except Exception as exc2:  # noqa: BLE001
                    return _fail_raised(ctx, exc2, "tf.vectorized_map over the op's gradient")
                note = f" (only through tf.vectorized_map's while-loop fallback: {why})"
            if key is not None:
                K.keep_in(_TF_KEPT, where, (ctx.obj, fn, note))
    tol = tolerances(dtype_name, numeric=True)  # batched kernels reorder arithmetic
    for k, name in enumerate(names):
        for b in range(SAMPLES):
            ok, detail = compare(batched[k][b].numpy(), alone[b][k], tol)
            if not ok:
                return failed(
                    NAME,
                    "differs",
                    f"tf.vectorized_map's per-sample gradient of "
                    f"{name} (sample {b}) differs from the sample run alone: {detail}",
                    ctx.backward_where(),
                    _FIX_DIFFERS,
                )
    return passed(
        NAME, f"tf.vectorized_map over {SAMPLES} samples gives each sample's own gradient{note}"
    )
