"""Ops for the reproduction scripts' tests (tests/test_repro_jax.py): JAX, with reference=,
flax / equinox Modules and an equinox filter_custom_vjp."""
import equinox as eqx
import flax.linen as nn
import jax
import jax.numpy as jnp
from flax import nnx

import gradviz


@jax.custom_vjp
def half_tanh(x):
    """differs: half the true gradient"""
    return jnp.tanh(x)


half_tanh.defvjp(lambda x: (jnp.tanh(x), jnp.tanh(x)), lambda y, g: (0.5 * g * (1 - y * y),))


@jax.custom_jvp
def log1pexp(x):
    """match: a stabilised softplus, its jvp sigmoid"""
    return jnp.log1p(jnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * jax.nn.sigmoid(x)


@gradviz.op(reference=lambda x: x * x * x + 0.25 * x)
@jax.custom_vjp
def cube_with_reference(x):
    """default is the reference= function: not the forward, custom and default differ"""
    return x * x * x


cube_with_reference.defvjp(lambda x: (x * x * x, x), lambda x, g: (3.0 * g * x * x,))


@gradviz.op(consts={"k": 2.0})
@eqx.filter_custom_vjp
def eqx_scaled(x, k):
    """differs: a filter_custom_vjp whose bwd forgets the constant factor"""
    return x * k


@eqx_scaled.def_fwd
def _eqx_scaled_fwd(perturbed, x, k):
    return x * k, None


@eqx_scaled.def_bwd
def _eqx_scaled_bwd(residuals, g, perturbed, x, k):
    return g


@jax.custom_vjp
def pair(x):
    """match: a dict output (a pytree), {"a": 2x, "b": sin x}"""
    return {"a": 2.0 * x, "b": jnp.sin(x)}


pair.defvjp(lambda x: (pair(x), x), lambda x, g: (2.0 * g["a"] + jnp.cos(x) * g["b"],))


@jax.custom_vjp
def _half_round(x):
    return jnp.round(x)


_half_round.defvjp(lambda x: (jnp.round(x), None), lambda res, g: (0.5 * g,))


@gradviz.op(inputs={"x": (6,)})  # the sublayer's size, whatever the run's shape
class NnxScale(nnx.Module):
    """an nnx Module with a parameter and a sublayer; its rule halves the gradient of x"""

    def __init__(self, n: int = 6):
        self.scale = nnx.Param(jnp.ones((n,)))
        self.inner = nnx.Linear(n, n, rngs=nnx.Rngs(0))

    def __call__(self, x):
        return self.inner(jnp.tanh(x) * self.scale) + _half_round(x)


class LinenScale(nn.Module):
    """a linen Module with a parameter, a Dense and batch statistics (frozen state)"""

    @nn.compact
    def __call__(self, x):
        scale = self.param("scale", nn.initializers.ones, x.shape[-1:])
        count = self.variable("batch_stats", "count", lambda: jnp.full(x.shape[-1:], 0.5))
        return nn.Dense(x.shape[-1])(jnp.tanh(x) * scale) * count.value + _half_round(x)


@gradviz.op(inputs={"x": (6,)}, reference=lambda self, x: jnp.tanh(x) * self.scale * 1.5)
class EqxScale(eqx.Module):
    """an equinox Module; its reference= takes the module first (and scales by 1.5)"""

    scale: jax.Array

    def __init__(self, n: int = 6):
        self.scale = jnp.ones((n,))

    def __call__(self, x):
        return half_tanh(x) * self.scale


@gradviz.op(inputs={"k": {"dtype": "int64", "range": (1, 3)}})
@jax.custom_vjp
def times_k(x, k):
    """match: an int input (no gradient), passed to the float64 loss as it is"""
    return x * k


times_k.defvjp(lambda x, k: (x * k, k), lambda k, g: (g * k, None))
