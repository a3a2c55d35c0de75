"""JAX custom rules with known gradients (op graph, upstream ones unless said):
round_ste: custom 1 everywhere (straight-through), default 0 (round is flat), verdict surrogate.
grad_reverse: forward x, custom -upstream: differs (GV302: a reversal it is named as).
log1pexp: a stabilised softplus written as a custom_jvp: custom = default = sigmoid(x), match.
wrong_factor: forward x**2, bwd 3*x*g where the derivative is 2*x: differs, GV301.
scaled: nondiff_argnums, the factor a constant (consts=): custom = default = k, match.
two_outputs: a dict output (a pytree): x -> {"a": 2x, "b": sin x}, match.
product_sz: symbolic_zeros=True: custom = default (y, x), match.
nested_jit: a rule whose primal calls round_ste under jax.jit: default = 0 (every rule removed,
jit off, so no trace made with the rule is reused), custom = 2 * upstream: surrogate.
needs_k: a nondiff_argnums argument without a value: refused at its line."""
from functools import partial

import jax
import jax.numpy as jnp
from jax.nn import relu  # noqa: F401 - JAX's own custom_jvp: imported, not an op of this file

import gradviz


@jax.custom_vjp
def round_ste(x):
    return jnp.round(x)


round_ste.defvjp(lambda x: (jnp.round(x), None), lambda res, g: (g,))


@jax.custom_vjp
def grad_reverse(x):
    return x


grad_reverse.defvjp(lambda x: (x, None), lambda res, g: (-g,))


@jax.custom_jvp
def log1pexp(x):
    return jnp.log1p(jnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return log1pexp(x), t * jax.nn.sigmoid(x)


@jax.custom_vjp
def wrong_factor(x):
    return x * x


wrong_factor.defvjp(lambda x: (x * x, x), lambda x, g: (3.0 * x * g,))


@gradviz.op(consts={"k": 3.0})
@partial(jax.custom_vjp, nondiff_argnums=(1,))
def scaled(x, k):
    return x * k


scaled.defvjp(lambda x, k: (x * k, None), lambda k, res, g: (g * k,))


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def needs_k(x, k):
    return x * k


needs_k.defvjp(lambda x, k: (x * k, None), lambda k, res, g: (g * k,))


@jax.custom_vjp
def two_outputs(x):
    return {"a": 2.0 * x, "b": jnp.sin(x)}


two_outputs.defvjp(lambda x: (two_outputs(x), x),
                   lambda x, g: (2.0 * g["a"] + jnp.cos(x) * g["b"],))


@jax.custom_vjp
def product_sz(x, y):
    return x * y


def _sz_fwd(x, y):
    return product_sz(x.value, y.value), (x.value, y.value)


def _sz_bwd(res, g):
    x, y = res
    return g * y, g * x


product_sz.defvjp(_sz_fwd, _sz_bwd, symbolic_zeros=True)


_rounded = jax.jit(round_ste)


@jax.custom_vjp
def nested_jit(x):
    return 2.0 * _rounded(x)


nested_jit.defvjp(lambda x: (nested_jit(x), None), lambda res, g: (2.0 * g,))
