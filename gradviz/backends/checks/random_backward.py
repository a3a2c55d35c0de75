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
    the checks' to report: nothing is skipped. TF: seeded without tf.random.set_seed's clear of
    the eager kernel cache where no op that the clear could change ran (tf_seeds.py)."""
    if ctx.framework == "tf":
        from gradviz.backends.checks import tf_seeds

        with tf_seeds.seeding() as seeding:
            if seeding is not None:
                drawn = _random(ctx, seeding.seed)
                if not seeding.unsure:
                    return _why(drawn)
    return _why(_random(ctx))


def _random(ctx, seed_tf=None) -> bool:
    """Whether the custom gradient changes with the seed and comes back with it. Python's and
    numpy's generators are put back after (once: each call seeds them anew)."""
    state = random.getstate(), np.random.get_state()
    try:
        grads = _grads_under(ctx, _SEEDS[0], seed_tf), _grads_under(ctx, _SEEDS[1], seed_tf)
        if grads[0] is None or _same(*grads):
            return False
        if not _same(grads[0], _grads_under(ctx, _SEEDS[0], seed_tf)):
            return False  # not the seed: state of its own, which the checks are there to see
    except Exception:  # noqa: BLE001 - the checks themselves run it again and say what it raised
        return False
    finally:
        random.setstate(state[0])
        np.random.set_state(state[1])
    return True


def _why(drawn: bool) -> dict:
    if not drawn:
        return {}
    why = (
        "the custom backward is random: under the same inputs and upstream it gives another "
        "gradient for another random seed (a stochastic estimator), and every check compares "
        "two calls of it, so each would compare two random draws"
    )
    return {name: why for name in CHECKS}


def _same(a: list, b: list) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b))


def _grads_under(ctx, seed: int, seed_tf=None):
    """The custom gradients of the op's tensor arguments with every RNG seeded `seed` (their
    states are put back by _random, torch's CPU one by fork_rng, TF's by unfit where it can).
    `seed_tf`: how TF's global seed is set (else tf.random.set_seed)."""
    grads_of = {"torch": _torch, "tf": _tf, "jax": _jax}.get(ctx.framework)
    if grads_of is None:
        return None
    random.seed(seed)
    np.random.seed(seed)
    return grads_of(ctx, seed) if seed_tf is None else grads_of(ctx, seed, seed_tf)


def _torch(ctx, seed: int):
    import torch

    from gradviz.backends.checks import torch_ops as T

    built = ctx.build("custom")
    with torch.random.fork_rng(devices=[]):
        _seed_torch(ctx, seed)
        xs = T.leaves(ctx, ctx.settings.dtype)
        outs = T.call(ctx, built, xs)
        if not outs:
            return None
        return [T.numpy(g) for g in T.vjp(outs, list(xs.values()), T.upstreams(ctx, outs))]


def _seed_torch(ctx, seed: int) -> None:
    """torch.manual_seed(seed); in a CPU run the CPU generator's alone, which is all it draws
    from. torch.manual_seed queues the seed of each accelerator not initialized yet (CUDA, XPU,
    MTIA) with a traceback.format_stack(): ~0.2 ms at a worker's depth, twice per run. Those
    seeds were never drawn from: a CPU run draws nothing on them, and every run seeds them
    again (the adapter's seed_random) before its first draw."""
    import torch

    if str(ctx.device) == "cpu":
        torch.default_generator.manual_seed(seed)
    else:
        torch.manual_seed(seed)


def _tf(ctx, seed: int, seed_tf=None):
    import tensorflow as tf

    if not ctx.tensor_plans():
        return None
    built = ctx.build("custom")
    values = ctx.arg_values()
    names = list(values)
    dtype = {"float32": tf.float32, "float64": tf.float64}[ctx.settings.dtype]
    (seed_tf or tf.random.set_seed)(seed)
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
