"""JAX rules that pass or fail each contract check that applies (tests/test_checks_jax.py).
Each op computes x * x (but softmax_host and wave_bf16); only its rule differs."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


@jax.custom_vjp
def square(x):
    """Passes every check that applies to JAX."""
    return x * x


square.defvjp(lambda x: (x * x, x), lambda x, g: (2.0 * x * g,))


@jax.custom_vjp
def square_numpy(x):
    """compiled, vmap, double_backward: the rule goes through numpy, which runs eagerly only."""
    return x * x


def _numpy_bwd(x, g):
    return (jnp.asarray(2.0 * np.asarray(x)) * g,)


square_numpy.defvjp(lambda x: (x * x, x), _numpy_bwd)


@jax.custom_vjp
def square_stopped(x):
    """double_backward: stop_gradient in the rule: the second derivative is a silent zero."""
    return x * x


def _stopped_bwd(x, g):
    return (2.0 * jax.lax.stop_gradient(x) * g,)


square_stopped.defvjp(lambda x: (x * x, x), _stopped_bwd)


@jax.custom_vjp
def square_half_stopped(x):
    """double_backward: right at first order (2 x), but half of it stopped: the second
    derivative through the rule is 1 where it is 2."""
    return x * x


def _half_stopped_bwd(x, g):
    return ((x + jax.lax.stop_gradient(x)) * g,)


square_half_stopped.defvjp(lambda x: (x * x, x), _half_stopped_bwd)


_steps = [0]


@jax.custom_vjp
def square_warmup(x):
    """compiled: a gradient warm-up read from a step counter kept in Python, which jax.jit
    reads once, at its trace."""
    return x * x


def _warmup_fwd(x):
    _steps[0] += 1
    return x * x, x


def _warmup_bwd(x, g):
    return (2.0 * x * g * min(1.0, _steps[0] / 1000.0),)


square_warmup.defvjp(_warmup_fwd, _warmup_bwd)


@jax.custom_vjp
def softmax_host(x):
    """vmap: the rule runs on the host through jax.pure_callback and declares it batches
    (vmap_method="broadcast_all"), but its numpy sum runs over the whole array, batch and all:
    right for one sample, wrong for a batch."""
    e = jnp.exp(x - jnp.max(x))
    return e / jnp.sum(e)


def _host_softmax_grad(y, g):
    return (y * (g - np.sum(g * y))).astype(y.dtype)


def _softmax_host_bwd(y, g):
    spec = jax.ShapeDtypeStruct(y.shape, y.dtype)
    return (jax.pure_callback(_host_softmax_grad, spec, y, g, vmap_method="broadcast_all"),)


softmax_host.defvjp(lambda x: (softmax_host(x), softmax_host(x)), _softmax_host_bwd)


@jax.custom_vjp
def wave_bf16(x):
    """precision: sin(8 x), its rule computed in bfloat16 whatever the run's dtype (float64
    too): 8 x loses the bits that cos needs."""
    return jnp.sin(8.0 * x)


def _bf16_bwd(x, g):
    low = jnp.bfloat16
    xb, gb = x.astype(low), g.astype(low)
    return ((8.0 * jnp.cos(8.0 * xb) * gb).astype(g.dtype),)


wave_bf16.defvjp(lambda x: (wave_bf16(x), x), _bf16_bwd)


@jax.custom_vjp
def square_cancel(x):
    """precision: float32 rounding in ((x + 1e5) - 1e5), right in float64."""
    return x * x


square_cancel.defvjp(lambda x: (x * x, x), lambda x, g: (((x + 1e5) - 1e5) * 2.0 * g,))


@jax.custom_vjp
def square_wrong(x):
    """precision: 2.01 x for 2 x."""
    return x * x


square_wrong.defvjp(lambda x: (x * x, x), lambda x, g: (2.01 * x * g,))


class StoppedScaled(eqx.Module):
    """double_backward, at square_stopped's bwd: an equinox Module around that rule."""
    scale: jax.Array

    def __init__(self, n: int = 200):
        self.scale = jnp.ones((n,))

    def __call__(self, x):
        return square_stopped(x) * self.scale
