"""JAX rules whose bwd is random or not (tests/test_checks_jax.py): a rule drawing from numpy's or
Python's generators gives another gradient at every call, so the contract checks, each comparing
two calls, are skipped saying so; a rule drawing with a jax.random key it is given the same way at
every call is no random backward, and its checks run."""

import random
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

import gradviz

KEY = jax.random.PRNGKey(0)


@jax.custom_vjp
def coin_ste_numpy(x):
    return jnp.sign(x)


def _coin_numpy_bwd(res, g):
    keep = np.random.uniform(size=g.shape) < 0.5  # a fresh coin per call
    return (g * jnp.asarray(keep, g.dtype) * 2.0,)


coin_ste_numpy.defvjp(lambda x: (jnp.sign(x), None), _coin_numpy_bwd)


@jax.custom_vjp
def noisy_python(x):
    return 2.0 * x


noisy_python.defvjp(lambda x: (2.0 * x, None), lambda res, g: (g * (2.0 + random.random()),))


@jax.custom_vjp
def coin_ste_key(x):
    return jnp.sign(x)


def _coin_key_bwd(res, g):
    keep = jax.random.bernoulli(KEY, 0.5, g.shape)  # the module's key: one draw, every call
    return (g * keep.astype(g.dtype) * 2.0,)


coin_ste_key.defvjp(lambda x: (jnp.sign(x), None), _coin_key_bwd)


@gradviz.op(consts={"seed": 3})
@partial(jax.custom_vjp, nondiff_argnums=(1,))
def coin_ste_seeded(x, seed):
    return jnp.sign(x)


def _coin_seeded_bwd(seed, res, g):
    keep = jax.random.bernoulli(jax.random.PRNGKey(seed), 0.5, g.shape)
    return (g * keep.astype(g.dtype) * 2.0,)


coin_ste_seeded.defvjp(lambda x, seed: (jnp.sign(x), None), _coin_seeded_bwd)
