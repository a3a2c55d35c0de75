"""double_backward: the custom gradient differentiated again (torch `create_graph=True`, TF
nested tapes, JAX jax.grad of the gradient through the rule) must agree with the numeric
derivative of the custom backward itself (what gradgradcheck checks) and, where the first
derivatives agree, with the default's second derivative. Everything in float64, along a few
random directions (cheap at any size)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gradviz.backends.checks import draws
from gradviz.backends.checks.context import upstreams_apply
from gradviz.backends.checks.outcome import (
    CheckFailed,
    failed,
    first_line,
    passed,
    raised,
    skipped,
)
from gradviz.backends.numeric import REL_EPS
from gradviz.backends.user_code import error_info
from gradviz.compare.rounding import narrowest
from gradviz.vocab import ErrorKind

NAME = "double_backward"
DIRECTIONS = 3
_ONCE = "once_differentiable"
_FIX_CUT = (
    "Compute the backward from differentiable framework ops on the saved tensors (no "
    ".detach(), .data, numpy or no_grad in it); if it cannot be, decorate it with "
    "@once_differentiable (torch) so a double backward raises instead of returning a "
    "silent zero."
)
_FIX_JAX = (
    "Compute the rule from jax.numpy / jax.lax ops on its residuals and the cotangent (no "
    "jax.lax.stop_gradient, numpy or host callback in it): JAX differentiates the rule itself "
    "for second derivatives (jax.hessian, jax.jvp of jax.grad)."
)
_FIX_TF = (
    "Compute the custom_gradient's grad_fn from differentiable TensorFlow ops on the tensors it "
    "closes over and the upstream (no tf.stop_gradient, .numpy(), numpy or tf.py_function in "
    "it): a nested tf.GradientTape differentiates grad_fn itself for second derivatives."
)
# how each framework's words name the second-order check and the fix
_WORDS = {
    "tf": ("a second-order check with nested tf.GradientTape", "", _FIX_TF),
    "jax": ("jax.test_util.check_grads(order=2)", "", _FIX_JAX),
}
_TORCH_WORDS = ("gradgradcheck", f"; mark it {_ONCE} if that is intended", _FIX_CUT)


def torch_check(ctx):
    import torch

    from gradviz.backends.checks import torch_ops as T

    def second(built, values):
        xs = [
            torch.tensor(v, dtype=torch.float64, device=ctx.device, requires_grad=True)
            for v in values.values()
        ]
        outs = T.call(ctx, built, dict(zip(values, xs)))
        if not outs:
            return None, None
        # the upstream needs a gradient too: that is when once_differentiable raises, as in
        # gradgradcheck
        ups = [
            torch.tensor(
                _upstream(i, tuple(o.shape)), dtype=o.dtype, device=o.device, requires_grad=True
            )
            for i, o in enumerate(outs)
        ]
        g = T.training_grads(outs, xs, ups, create_graph=True)
        s = sum(
            (torch.as_tensor(v, dtype=torch.float64, device=ctx.device) * gi).sum()
            for v, gi in zip(_vs(values), g)
            if gi is not None
        )
        if not torch.is_tensor(s) or not s.requires_grad:
            return [T.numpy(gi) for gi in g], [None] * len(xs)
        # .backward() runs every node, as gradgradcheck's does: a once_differentiable backward
        # hangs its error on a node that autograd.grad(inputs=...) would prune
        s.backward()
        return [T.numpy(gi) for gi in g], [T.numpy(x.grad) for x in xs]

    def first(built, values):
        xs = [
            torch.tensor(v, dtype=torch.float64, device=ctx.device, requires_grad=True)
            for v in values.values()
        ]
        outs = T.call(ctx, built, dict(zip(values, xs)))
        ups = [
            torch.as_tensor(_upstream(i, tuple(o.shape)), dtype=o.dtype, device=o.device)
            for i, o in enumerate(outs)
        ]
        return [T.numpy(gi) for gi in T.training_grads(outs, xs, ups)]

    return _check(ctx, second, first)


def tf_check(ctx):
    import tensorflow as tf

    def grads(built, xs, values):
        with tf.GradientTape() as inner:
            inner.watch(xs)
            args, kwargs = ctx.call_args(dict(zip(values, xs)))
            outs = built.call_op(args, kwargs)
        if not outs:
            return None
        # the upstream as the outputs' gradient: the same numbers as the gradient of
        # sum(upstream * out) (d/d out of it is the upstream exactly), without taping that
        # loss and differentiating it (half the TF ops of each of the eight calls)
        ups = [tf.constant(_upstream(i, tuple(o.shape)), dtype=o.dtype) for i, o in enumerate(outs)]
        return inner.gradient(outs, xs, output_gradients=ups)

    def second(built, values):
        with tf.device(ctx.device):
            xs = [tf.constant(v, dtype=tf.float64) for v in values.values()]
            with tf.GradientTape() as outer:
                outer.watch(xs)
                g = grads(built, xs, values)
                if g is None:
                    return None, None
                live = [(tf.constant(v), gi) for v, gi in zip(_vs(values), g) if gi is not None]
                # float64 gradients of their inputs' shapes: the directions as their
                # gradients, the numbers of differentiating sum(v * g) without taping it
                # (tf_grads' upstreams_apply); else that sum, which says what does not fit
                as_directions = upstreams_apply([gi for _, gi in live]) and all(
                    gi.dtype == tf.float64 and tuple(gi.shape) == tuple(v.shape) for v, gi in live
                )
                if not as_directions:
                    terms = [tf.reduce_sum(v * tf.cast(gi, tf.float64)) for v, gi in live]
                    s = tf.add_n(terms) if terms else None
            if as_directions:
                gg = outer.gradient(
                    [gi for _, gi in live], xs, output_gradients=[v for v, _ in live]
                )
            else:
                gg = outer.gradient(s, xs) if s is not None else [None] * len(xs)
            return [_np(gi) for gi in g], [_np(x) for x in gg]

    def first(built, values):
        # no outer tape: it recorded the whole backward of each of the six finite-difference
        # calls for a second derivative never taken (the same values, half the TF work)
        with tf.device(ctx.device):
            xs = [tf.constant(v, dtype=tf.float64) for v in values.values()]
            return [_np(gi) for gi in grads(built, xs, values)]

    return _check(ctx, second, first)


def jax_check(ctx):
    import jax
    import jax.numpy as jnp

    from gradviz.backends.checks import jax_ops as J

    def grads(built, values, nested: bool):
        names = list(values)
        with J.scope(ctx, "float64"):
            xs = [jnp.asarray(v, jnp.float64) for v in values.values()]
            probe = J.outputs(ctx, built, dict(zip(names, xs)))
            if not probe:
                return None, None
            ups = [jnp.asarray(_upstream(i, o.shape), o.dtype) for i, o in enumerate(probe)]
            grad = J.grad_fn(ctx, built, names, ups)
            g = [J.numpy(gi) for gi in grad(*xs)]
            if not nested:
                return g, None
            vs = [jnp.asarray(v) for v in _vs(values)]

            def along(*a):
                return sum(jnp.sum(v * gi) for v, gi in zip(vs, grad(*a)))

            try:
                gg = jax.grad(along, argnums=tuple(range(len(xs))))(*xs)
            except Exception as exc:  # noqa: BLE001 - the first order ran: JAX refuses the rule
                err = error_info(exc, ErrorKind.ERROR, ctx.backward_where())
                err = replace(err, message=first_line(err.message))
                during = "differentiating the custom rule again (jax.grad of its gradient)"
                raise CheckFailed(raised(NAME, err, during, fix=_FIX_JAX)) from exc
            return g, [J.numpy(x) for x in gg]

    return _check(ctx, lambda b, v: grads(b, v, True), lambda b, v: grads(b, v, False)[0])


def _np(t):
    if t is None:
        return None
    import tensorflow as tf

    if isinstance(t, tf.IndexedSlices):
        t = tf.convert_to_tensor(t)
    return np.asarray(t.numpy(), dtype=np.float64)


def _upstream(i: int, shape) -> np.ndarray:
    return draws.normal((7, i), shape)


def _vs(values: dict) -> list:
    return [draws.normal((11, k), np.shape(v)) for k, v in enumerate(values.values())]


def _check(ctx, second, first):
    values = ctx.arg_values()
    if not values:
        return skipped(NAME, f"{ctx.info.name} takes no tensor argument")
    custom = ctx.build("custom", "float64")
    try:
        g, gg = second(custom, values)
    except Exception as exc:  # noqa: BLE001 - classified below; others go up to run_checks
        if _ONCE in str(exc):
            return failed(
                NAME,
                "once_differentiable",
                "the backward is marked @once_differentiable, so differentiating the "
                "custom gradient again (create_graph=True, as gradgradcheck, "
                "gradient penalties and MAML do) raises",
                ctx.backward_where(),
                "If second derivatives are needed, remove @once_differentiable and "
                "write the backward with differentiable torch ops; otherwise nothing "
                "to fix: double backward is refused loudly, as intended.",
            )
        raise
    if g is None:
        return skipped(NAME, f"{ctx.info.name} returns no output that needs a gradient")
    names = list(values)
    checker, mark, fix = _WORDS.get(ctx.framework, _TORCH_WORDS)
    gg = [np.zeros(np.shape(v)) if x is None else x for v, x in zip(values.values(), gg)]
    rng = np.random.default_rng(3)
    for _ in range(DIRECTIONS):
        ws = [rng.standard_normal(np.shape(v)) for v in values.values()]
        eps = REL_EPS * max(
            1.0,
            max(
                float(np.sqrt(np.mean(np.square(v)))) if np.size(v) else 0.0
                for v in values.values()
            ),
        )
        plus = first(custom, {n: v + eps * w for (n, v), w in zip(values.items(), ws)})
        minus = first(custom, {n: v - eps * w for (n, v), w in zip(values.items(), ws)})
        vs = _vs(values)
        num = sum(_dot(v, p) - _dot(v, m) for v, p, m in zip(vs, plus, minus)) / (2 * eps)
        ana = sum(float(np.sum(w * x)) for w, x in zip(ws, gg))
        scale = max(1.0, abs(num), abs(ana))
        if abs(num - ana) > 1e-5 * scale:
            flat = all(float(np.abs(x).max(initial=0.0)) == 0.0 for x in gg)
            if flat and abs(num) > 1e-5 * scale:
                return failed(
                    NAME,
                    "not_differentiable",
                    f"the custom gradient is not differentiable: double backward gives zero "
                    f"(no graph) for {', '.join(names)}, while the numeric derivative of the "
                    f"backward along a random direction is {num:.4g}, so gradient penalties "
                    f"and second-order methods get a silent zero{mark}",
                    ctx.backward_where(),
                    fix,
                )
            unfit = _unfit_for_differences(g, first(custom, values))
            if unfit:
                return skipped(NAME, unfit)
            return failed(
                NAME,
                "wrong_second",
                f"differentiating the custom backward again gives {ana:.6g} along a random "
                f"direction where its numeric derivative is {num:.6g} ({checker} would "
                "fail): part of the backward is computed outside the graph",
                ctx.backward_where(),
                fix,
            )
    note = _versus_default(ctx, second, values, g, gg)
    if isinstance(note, tuple):
        return failed(NAME, "differs_default", note[0], ctx.backward_where(), fix)
    return passed(
        NAME,
        f"the custom gradient differentiated again agrees with the numeric "
        f"derivative of the backward ({DIRECTIONS} random directions){note}",
    )


def _unfit_for_differences(g, again) -> str:
    """Why finite differences of the custom backward measure no derivative, or "": it rounds its
    gradient below float64 (a cast to bfloat16 or float32 inside it: steps, no slope at eps), or
    two calls at the same point give other gradients (a random backward). Then a disagreement
    with them says nothing about the graph the backward builds."""
    for x in g:
        live = np.ravel(x)[np.isfinite(np.ravel(x)) & (np.ravel(x) != 0)] if x is not None else ()
        fmt = narrowest(live, wider_than="float64") if np.unique(live).size >= 8 else None
        if fmt is not None:
            return (
                f"the custom backward rounds a gradient to {fmt} in a float64 run (each of "
                f"its {live.size} nonzero values is exactly a {fmt} number), so finite "
                "differences of it measure rounding steps, not its derivative; second "
                "derivatives not compared (the diagnostics say what the rounding costs)"
            )
    for a, b in zip(g, again):
        if (a is None) != (b is None) or (a is not None and not np.allclose(a, b, 1e-9, 1e-12)):
            return (
                "the custom backward gives other gradients at the same point on a second "
                "call (a random backward), so finite differences of it measure no "
                "derivative; second derivatives not compared"
            )
    return ""


def _versus_default(ctx, second, values, g, gg):
    try:
        default = ctx.build("default", "float64")
        dg, dgg = second(default, values)
    except Exception as exc:  # noqa: BLE001 - the default path is a reference, not the subject
        return f"; the default's second derivative is not available ({type(exc).__name__})"
    if dg is None:
        return "; the default has no gradient path to compare"
    for a, b in zip(g, dg):
        if (a is None) != (b is None) or (a is not None and not np.allclose(a, b, 1e-6, 1e-8)):
            return (
                "; the custom first derivative differs from the default's (a surrogate?), "
                "so second derivatives were not compared with the default"
            )
    for name, a, b in zip(values, gg, dgg):
        b = np.zeros(np.shape(a)) if b is None else b
        if not np.allclose(a, b, rtol=1e-5, atol=1e-7 * max(1.0, float(np.abs(b).max(initial=0)))):
            err = float(np.abs(a - b).max())
            return (
                f"the second derivative through the custom backward differs from the "
                f"default's for {name} (max abs difference {err:.3g}) while the first "
                "derivatives agree",
            )
    return " and with the default's double backward"


def _dot(v, g) -> float:
    return 0.0 if g is None else float(np.sum(v * g))
