"""A flax.nnx, a flax.linen and an equinox Module around one straight-through rounding rule,
each with a trainable `scale` (linen's and nnx's also a sublayer's kernel and bias):
out = round(x) * scale; custom dx = scale (surrogate), dscale = round(x) (match)."""
import equinox as eqx
import flax.linen as nn
import jax
import jax.numpy as jnp
from flax import nnx


@jax.custom_vjp
def ste_round(x):
    return jnp.round(x)


ste_round.defvjp(lambda x: (jnp.round(x), None), lambda res, g: (g,))


class NnxScaled(nnx.Module):
    def __init__(self, n: int = 200):
        self.scale = nnx.Param(jnp.ones((n,)))
        self.inner = nnx.Linear(n, 3, rngs=nnx.Rngs(0))

    def __call__(self, x):
        y = ste_round(x) * self.scale
        return y, self.inner(y)


class LinenScaled(nn.Module):
    @nn.compact
    def __call__(self, x):
        scale = self.param("scale", nn.initializers.ones, x.shape[-1:])
        y = ste_round(x) * scale
        return y, nn.Dense(3)(y)


class EqxScaled(eqx.Module):
    scale: jax.Array
    inner: eqx.nn.Linear

    def __init__(self, n: int = 200):
        self.scale = jnp.ones((n,))
        self.inner = eqx.nn.Linear(n, 3, key=jax.random.PRNGKey(0))

    def __call__(self, x):
        y = ste_round(x) * self.scale
        return y, self.inner(y)
