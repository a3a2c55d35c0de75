"""JAX rules that the framework-neutral checks find (no JAX error): their advice must read in
JAX's words (bwd, cotangent, the tangent rule, jnp), never torch's or TF's. The line each
finding names says `# GVxxx`."""
import equinox as eqx
import flax.nnx as nnx
import jax
import jax.numpy as jnp

import gradviz


@jax.custom_vjp
def ignores_cotangent(x):
    return x * x


def _ignores_cotangent_bwd(x, g):  # GV108
    return (2.0 * x,)


ignores_cotangent.defvjp(lambda x: (x * x, x), _ignores_cotangent_bwd)


@jax.custom_vjp
def fwd_changes_output(x):
    return jnp.sin(x)


def _fwd_changes_output_fwd(x):
    return jnp.sin(x) + 1.0, jnp.cos(x)  # GV201


fwd_changes_output.defvjp(_fwd_changes_output_fwd, lambda c, g: (g * c,))


@jax.custom_vjp
def flipped(x):
    return jnp.sin(x)


flipped.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (-g * c,))  # GV305


@gradviz.op(inputs={"x": [0.0, 1.0, -2.0, 0.0]})
@jax.custom_vjp
def nan_cotangent(x):
    return x * x


nan_cotangent.defvjp(lambda x: (x * x, x), lambda x, g: (2.0 * g * x * x / x,))  # GV401


@jax.custom_jvp
def tangent_factor(x):
    return x * x


@tangent_factor.defjvp
def _tangent_factor_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return x * x, 3.0 * x * t  # GV301


@eqx.filter_custom_vjp
def eqx_ignores_cotangent(x):
    return x * x


@eqx_ignores_cotangent.def_fwd
def _eqx_ignores_fwd(perturbed, x):
    return x * x, x


@eqx_ignores_cotangent.def_bwd
def _eqx_ignores_bwd(residuals, g, perturbed, x):  # GV108
    return 2.0 * residuals


class NeedsFeatures(nnx.Module):
    def __init__(self):
        self.inner = nnx.Linear(4, 3, rngs=nnx.Rngs(0))

    def __call__(self, x):
        return self.inner(x)  # GV107
