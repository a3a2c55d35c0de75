"""A backward that draws random numbers (a stochastic straight-through estimator, a noisy
gradient): every contract check compares two calls of it, so each would compare two draws and
blame strides, compile, autocast or batching for the noise. It is told once, before the checks,
from the custom gradient under the same inputs and upstream: it changes with the random seed,
and comes back when the seed does. A backward that keeps state of its own (a call counter)
differs under one seed too: it is not random, and the checks go on to show it. JAX: only a rule
drawing from Python's or numpy's generators can be random (a jax.random key is the same at every
call). Worker-only."""

from __future__ import annotations

import random

import numpy as np

from gradviz.model import CHECKS

_SEEDS = (20240, 777)


def unfit(ctx) -> dict:
    """{check: why it is skipped} for a random backward, else {}. A backward that raises here is
    the checks' to report: nothing is skipped."""
    try:
        grads = _grads_under(ctx, _SEEDS[0]), _grads_under(ctx, _SEEDS[1])
        if grads[0] is None or _same(*grads):
            return {}
        if not _same(grads[0], _grads_under(ctx, _SEEDS[0])):
            return {}  # not the seed: state of its own, which the checks are there to see
    except Exception:  # noqa: BLE001 - the checks themselves run it again and say what it raised
        return {}
    why = (
        "the custom backward is random: under the same inputs and upstream it gives another "
        "gradient for another random seed (a stochastic estimator), and every check compares "
        "two calls of it, so each would compare two random draws"
    )
    return {name: why for name in CHECKS}


def _same(a: list, b: list) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b))


def _grads_under(ctx, seed: int):
    """The custom gradients of the op's tensor arguments with every RNG seeded `seed`; the RNGs'
    states are put back after."""
    grads_of = {"torch": _torch, "tf": _tf, "jax": _jax}.get(ctx.framework)
    if grads_of is None:
        return None
    state = random.getstate(), np.random.get_state()
    try:
        random.seed(seed)
        np.random.seed(seed)
        return grads_of(ctx, seed)
    finally:
        random.setstate(state[0])
        np.random.set_state(state[1])


def _torch(ctx, seed: int):
    import torch

    from gradviz.backends.checks import torch_ops as T

    built = ctx.build("custom")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        xs = T.leaves(ctx, ctx.settings.dtype)
        outs = T.call(ctx, built, xs)
        if not outs:
            return None
        return [T.numpy(g) for g in T.vjp(outs, list(xs.values()), T.upstreams(ctx, outs))]


def _tf(ctx, seed: int):
    import tensorflow as tf

    if not ctx.tensor_plans():
        return None
    built = ctx.build("custom")
    values = ctx.arg_values()
    names = list(values)
    dtype = {"float32": tf.float32, "float64": tf.float64}[ctx.settings.dtype]
    tf.random.set_seed(seed)
    with tf.device(ctx.device):
        xs = [tf.constant(values[n], dtype) for n in names]
        return [g.numpy() for g in ctx.tf_grads(built, names, xs)]


def _jax(ctx, seed: int):
    """JAX has no global random state: a rule's jax.random draws come from keys, the same at
    every call; only Python's and numpy's generators (seeded above) make a rule random here.
    Eager jax.grad, so a bwd runs as it is at each call (a jit would freeze one draw)."""
    from gradviz.backends.checks import jax_ops as J

    if not ctx.tensor_plans():
        return None
    built = ctx.build("custom")
    dtype = ctx.settings.dtype
    with J.scope(ctx, dtype):
        xs = J.arrays(ctx, dtype)
        outs = J.outputs(ctx, built, xs)
        if not outs:
            return None
        grad = J.grad_fn(ctx, built, list(xs), J.upstreams(ctx, outs))
        return [J.numpy(g) for g in grad(*xs.values())]
