"""autocast: mixed precision as training runs it. torch: forward under CPU (or CUDA) bfloat16
torch.autocast, backward outside it as PyTorch recommends; TF: a Keras layer built under the
mixed_bfloat16 policy (restored after), a plain custom_gradient function fed bfloat16 inputs.
Both must run and agree with float32 within bfloat16 tolerance."""

from __future__ import annotations

import numpy as np

from gradviz.backends.checks.outcome import brief, failed, passed, skipped
from gradviz.backends.user_code import error_info
from gradviz.compare.numeric_metrics import KINK_FRACTION
from gradviz.seeds import upstream_values
from gradviz.vocab import ErrorKind

NAME = "autocast"
# bfloat16 keeps 8 significant bits (relative rounding 2**-8 ~ 0.4 %); sums of products
# accumulate a few of those. A wrong formula misses by far more.
REL_TOL = 0.05
_FIX_TORCH = (
    "Decorate forward with @torch.amp.custom_fwd(device_type=..., cast_inputs="
    "torch.float32) and backward with @torch.amp.custom_bwd(device_type=...) (old-style "
    "forward(ctx, ...) only), or cast saved tensors and grad_output to one dtype in "
    "backward before combining them."
)
_FIX_TF = (
    "Cast inside the op to the input's dtype (tf.cast(w, x.dtype)) and return each "
    "gradient in its input's dtype; never mix bfloat16 and float32 tensors in one op."
)


def _agree(got: np.ndarray, ref: np.ndarray, floor: float = 0.0) -> tuple[bool, float]:
    """Relative L2 of got against ref, leaving out the few elements (kinks, at most 1 in 100)
    where bfloat16's rounding of an input crosses a threshold of the op (a clip bound, a
    rounding step) and flips its gradient there: the verdicts allow those too. `floor`: the
    least scale to divide by (see _floors)."""
    got = np.asarray(got, np.float64).reshape(-1)
    ref = np.asarray(ref, np.float64).reshape(-1)
    if not np.isfinite(got).all():
        return False, float("nan")
    diff = np.abs(got - ref)
    kinks = _kinks(diff.size)
    if kinks:
        diff[np.argpartition(diff, diff.size - kinks)[diff.size - kinks :]] = 0.0
    scale = max(float(np.linalg.norm(ref)), floor)
    err = float(np.linalg.norm(diff))
    rel = err / scale if scale > 0 else err
    return rel <= REL_TOL, rel


def _kinks(n: int) -> int:
    return max(1, int(KINK_FRACTION * n)) if n > 1 else 0


def _left_out(n: int) -> str:
    k = _kinks(n)
    return f", its worst {k} of {n} elements left out as kinks" if k else ""


def _random_upstream(ctx):
    """`(index, shape) -> array`: a random upstream of the run's upstream's size per output."""
    rand = ctx.settings.with_(upstream="random", seed=ctx.settings.seed + 1)

    def up(i, shape):
        name = "out" if i == 0 else f"out{i}"
        u, run = upstream_values(rand, name, tuple(shape)), ctx.upstream(i, tuple(shape))
        size = float(np.linalg.norm(u))
        return u * (float(np.linalg.norm(run)) / size) if size > 0 else u

    return up


def _floors(ref_random: list) -> list[float]:
    """The float32 gradients' sizes under a random upstream of the run's upstream's size: the
    scale bfloat16's rounding errors take. Under upstream ones a normalisation's gradient (a
    softmax's, a layer norm's) cancels to float32 rounding, and any bfloat16 error measured
    against that near-zero reads as a miss by 10^4; a wrong one misses the floor too."""
    return [
        0.0 if g is None else float(np.linalg.norm(np.asarray(g, np.float64))) for g in ref_random
    ]


def _raised(ctx, exc, during: str, fix: str):
    err = error_info(exc, ErrorKind.ERROR, ctx.forward_where())
    text = brief(err.message)
    return failed(
        NAME,
        "raised",
        f"{during} raised {err.type}: {text} (an op mixes bfloat16 and float32 tensors)",
        err.where,
        fix,
    )


def _compare(ctx, names, got, ref, what: str, fix: str, floors=None):
    """The first failing tensor's outcome, or None. `floors`: a callable giving _floors, asked
    only when a gradient misses its float32 one (it costs another float32 backward)."""
    kept: list[float] | None = None
    for i, (name, a, b) in enumerate(zip(names, got, ref)):
        if a is None or b is None:
            if (a is None) != (b is None):
                return failed(
                    NAME,
                    "missing",
                    f"{what}: the gradient of {name} is "
                    f"{'missing' if a is None else 'present'}, unlike in float32",
                    ctx.backward_where(),
                    fix,
                )
            continue
        ok, rel = _agree(a, b)
        if not ok and floors is not None:
            kept = floors() if kept is None else kept
            ok, rel = _agree(a, b, kept[i])
        if not ok:
            return failed(
                NAME,
                "differs",
                f"{what}: the gradient of {name} differs from "
                f"float32 by {rel:.3g} (relative L2{_left_out(np.size(a))}; bfloat16 allows "
                f"{REL_TOL:g})",
                ctx.backward_where(),
                fix,
            )
    return None


def _not_applicable(ctx):
    """The skip for an op or run autocast does not apply to, else None."""
    if not ctx.tensor_plans():
        return skipped(NAME, f"{ctx.info.name} takes no tensor argument")
    if ctx.settings.dtype != "float32":
        return skipped(NAME, f"autocast applies to float32 runs (this run is {ctx.settings.dtype})")
    return None


def jax_check(ctx):
    return skipped(
        NAME,
        "JAX has no autocast: no context changes the dtype an op computes in, and mixed "
        "precision there is casting arrays yourself (the op then runs in the dtype it is given)",
    )


def torch_check(ctx):
    import torch

    from gradviz.backends.checks import torch_ops as T

    not_applicable = _not_applicable(ctx)
    if not_applicable:
        return not_applicable
    device_type = "cuda" if str(ctx.device).startswith("cuda") else "cpu"
    built = ctx.build("custom")
    xs = T.leaves(ctx, "float32")
    outs = T.call(ctx, built, xs)
    if not outs:
        return skipped(NAME, T.no_outputs(ctx))
    names = list(xs)
    ref = [T.numpy(g) for g in T.training_grads(outs, list(xs.values()), T.upstreams(ctx, outs))]
    xs = T.leaves(ctx, "float32")
    what = f"torch.autocast({device_type!r}, dtype=torch.bfloat16)"
    try:
        with torch.autocast(device_type, dtype=torch.bfloat16):
            outs = T.call(ctx, built, xs)
        ups = T.upstreams(ctx, outs)
        got = T.training_grads(outs, list(xs.values()), ups)  # backward outside autocast
    except Exception as exc:  # noqa: BLE001 - the framework's refusal is the finding
        return _raised(ctx, exc, f"forward under {what} and backward after it", _FIX_TORCH)
    for name, g, x in zip(names, got, xs.values()):
        if g is not None and g.dtype != x.dtype:
            return failed(
                NAME,
                "dtype",
                f"under {what} the gradient of {name} is {g.dtype} for a {x.dtype} input",
                ctx.backward_where(),
                _FIX_TORCH,
            )

    def floors():
        xs = T.leaves(ctx, "float32")
        outs = T.call(ctx, built, xs)
        up = _random_upstream(ctx)
        ups = [
            torch.as_tensor(up(i, tuple(o.shape)), dtype=o.dtype, device=o.device)
            for i, o in enumerate(outs)
        ]
        return _floors([T.numpy(g) for g in T.training_grads(outs, list(xs.values()), ups)])

    bad = _compare(ctx, names, [T.numpy(g) for g in got], ref, f"under {what}", _FIX_TORCH, floors)
    if bad is not None:
        return bad
    dtypes = sorted({str(o.dtype).replace("torch.", "") for o in outs})
    return passed(
        NAME,
        f"forward under {what} (outputs {', '.join(dtypes)}) and backward outside "
        f"it agree with float32 within bfloat16 tolerance ({REL_TOL:g})",
    )


def tf_check(ctx):
    import tensorflow as tf

    not_applicable = _not_applicable(ctx)
    if not_applicable:
        return not_applicable
    values = ctx.arg_values()
    names = list(values)

    def grads(built, dtype, up=ctx.upstream):
        with tf.device(ctx.device):
            xs = [tf.constant(values[n], dtype) for n in names]
            with tf.GradientTape() as tape:
                tape.watch(xs)
                args, kwargs = ctx.call_args(dict(zip(names, xs)))
                outs = built.call_op(args, kwargs)
            # the upstream as the outputs' gradient: the same numbers as differentiating
            # sum(upstream * out), without taping that loss (double_backward's tf_check)
            ups = [tf.cast(tf.constant(up(i, tuple(o.shape))), o.dtype) for i, o in enumerate(outs)]
            got = tape.gradient(outs, xs, output_gradients=ups)
        return got, [o.dtype for o in outs]

    ref, _ = grads(ctx.build("custom", "float32"), tf.float32)
    ref = [
        None if g is None else np.asarray(tf.convert_to_tensor(g).numpy(), np.float64) for g in ref
    ]

    def floors():
        got, _ = grads(ctx.build("custom", "float32"), tf.float32, _random_upstream(ctx))
        return _floors([None if g is None else tf.convert_to_tensor(g).numpy() for g in got])

    if ctx.info.kind == "layer":
        return _tf_layer(ctx, grads, names, ref, floors)
    what = "the op fed bfloat16 inputs"
    try:
        got, out_dtypes = grads(ctx.build("custom", "float32"), tf.bfloat16)
    except Exception as exc:  # noqa: BLE001 - the framework's refusal is the finding
        return _raised(ctx, exc, what, _FIX_TF)
    for name, g in zip(names, got):
        if g is not None and g.dtype != tf.bfloat16:
            return failed(
                NAME,
                "dtype",
                f"{what}: the gradient of {name} is {g.dtype.name} for a bfloat16 input",
                ctx.backward_where(),
                _FIX_TF,
            )
    got = [
        None
        if g is None
        else np.asarray(tf.cast(tf.convert_to_tensor(g), tf.float32).numpy(), np.float64)
        for g in got
    ]
    bad = _compare(ctx, names, got, ref, what, _FIX_TF, floors)
    if bad is not None:
        return bad
    outs = ", ".join(sorted({d.name for d in out_dtypes}))
    return passed(
        NAME,
        f"{what} run (outputs {outs}) and agree with float32 within bfloat16 "
        f"tolerance ({REL_TOL:g})",
    )


def _tf_layer(ctx, grads, names, ref, floors):
    import tensorflow as tf

    from gradviz.backends.tf_backend import Built

    keras = tf.keras
    what = "the layer under the mixed_bfloat16 policy"
    old = keras.config.dtype_policy()
    try:
        # Built here, not by the adapter: its build pins the run's float32 policy on the layer.
        keras.config.set_dtype_policy("mixed_bfloat16")
        with tf.device(ctx.device):
            layer = ctx.obj()
            if not layer.built:
                args, kwargs = ctx.call_args(
                    {n: tf.constant(v, tf.float32) for n, v in ctx.arg_values().items()}
                )
                layer(*args, **kwargs)
        built = Built(layer, layer)
        ctx.seed_params(built)
        got, out_dtypes = grads(built, tf.float32)
    except Exception as exc:  # noqa: BLE001 - the framework's refusal is the finding
        return _raised(ctx, exc, what, _FIX_TF)
    finally:
        keras.config.set_dtype_policy(old)
    got = [
        None if g is None else np.asarray(tf.convert_to_tensor(g).numpy(), np.float64) for g in got
    ]
    bad = _compare(ctx, names, got, ref, what, _FIX_TF, floors)
    if bad is not None:
        return bad
    outs = ", ".join(sorted({d.name for d in out_dtypes}))
    return passed(
        NAME,
        f"{what} runs (outputs {outs}) and agrees with float32 within bfloat16 "
        f"tolerance ({REL_TOL:g})",
    )
