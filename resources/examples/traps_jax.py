"""Traps: JAX custom-rule mistakes, one op each.

Every op below is WRONG on purpose, so gradviz can show what each mistake looks like: the
finding names the line and says what to change. Behaviour noted here was checked with JAX 0.10.
"""
from functools import partial

import equinox as eqx
import jax
import jax.numpy as jnp

import gradviz


@gradviz.op(name="trap_too_many_cotangents")
@jax.custom_vjp
def too_many_cotangents(x):
    """bwd must return a tuple with exactly one cotangent per argument (here: one).

    JAX raises after bwd returns: "Custom VJP bwd rule must produce an output with the same
    container (pytree) structure as the args tuple of the primal function ... but got bwd
    output structure PyTreeDef((*, *)) for primal input structure PyTreeDef((*,))" (GV101).
    Returning `2.0 * g` without the tuple fails the same way.
    """
    return 2.0 * x


def _too_many_bwd(res, g):
    return 2.0 * g, g  # WRONG: two cotangents for one argument


too_many_cotangents.defvjp(lambda x: (2.0 * x, None), _too_many_bwd)


@gradviz.op(name="trap_residuals")
@jax.custom_vjp
def residuals_mismatch(x):
    """fwd's residuals and what bwd unpacks must be one structure (a pytree).

    fwd saves one array, bwd unpacks two values from it: Python's "too many values to unpack
    (expected 2)" in bwd, or silently wrong values when the array happens to have 2 elements
    (GV608). Fix: return jnp.sin(x), (jnp.cos(x), x) from fwd.
    """
    return jnp.sin(x)


def _residuals_fwd(x):
    return jnp.sin(x), jnp.cos(x)


def _residuals_bwd(res, g):
    cos_x, x = res  # WRONG: fwd saved one array, not the pair (cos_x, x)
    return (g * cos_x,)


residuals_mismatch.defvjp(_residuals_fwd, _residuals_bwd)


@gradviz.op(name="trap_nonlinear_tangent")
@jax.custom_jvp
def nonlinear_tangent(x):
    """A custom_jvp's tangent output must be linear in the tangents.

    jax.grad differentiates a custom_jvp by transposing its tangent rule; t * t cannot be
    transposed, and JAX fails with a bare AssertionError deep inside its transposition (other
    non-linear uses, such as jnp.abs(t), say "Transpose rule ... not implemented") (GV609).
    Forward-mode (jax.jvp) would run, with the wrong answer.
    """
    return jnp.sin(x)


@nonlinear_tangent.defjvp
def _nonlinear_tangent_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return jnp.sin(x), jnp.cos(x) * t * t  # WRONG: t * t is not linear in t


@gradviz.op(name="trap_tangent_only")
@jax.custom_jvp
def tangent_only(x):
    """A custom_jvp's tangent rule returns the pair (primal_out, tangent_out).

    Returning the tangent alone runs under a plain call (the rule is not used there) and fails
    under jax.grad, where JAX says the rule "must produce a pair" without naming a line (GV611).
    Fix: return jnp.sin(x), jnp.cos(x) * t.
    """
    return jnp.sin(x)


@tangent_only.defjvp
def _tangent_only_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return jnp.cos(x) * t  # WRONG: the tangent alone, not (primal_out, tangent_out)


@gradviz.op(name="trap_nondiff_input", inputs={"s": (200,)})
@partial(jax.custom_vjp, nondiff_argnums=(1,))
def scale_nondiff(x, s):
    """An array argument declared in nondiff_argnums, and fed as an array input.

    JAX takes a nondiff argument as a constant it never differentiates (bwd gets it first, and
    returns no cotangent for it), so gradviz refuses to feed `s` as an input (GV610), as JAX
    refuses a traced one (below). Fix: drop nondiff_argnums and return a cotangent for `s`.
    """
    return x * s


scale_nondiff.defvjp(lambda x, s: (x * s, None), lambda s, res, g: (g * s,))


@gradviz.op(name="trap_nondiff_array")
class NondiffArray(eqx.Module):
    """A trainable array passed in a nondiff_argnums position.

    nondiff_argnums is for Python values (functions, ints, flags): JAX refuses a traced array
    there with "UnexpectedTracerError: Found a JAX Tracer object passed as an argument to a
    custom_vjp function in a position indicated by nondiff_argnums as non-differentiable"
    (GV610). Fix: make `s` an ordinary argument and return its cotangent from bwd.
    """

    scale: jax.Array

    def __init__(self, size=200):
        self.scale = jnp.ones(size)

    def __call__(self, x):
        return scale_nondiff(x, self.scale)  # WRONG: self.scale is traced when gradviz differentiates


@gradviz.op(name="trap_wrong_factor")
@jax.custom_vjp
def wrong_factor(x):
    """out = x ** 2, whose derivative is 2 * x; bwd returns 3 * x * g.

    JAX raises nothing: the verdict is `differs` and the diagnostics read the factor off the
    numbers, 1.5 times the true gradient everywhere (GV301).
    """
    return x * x


wrong_factor.defvjp(lambda x: (x * x, x), lambda x, g: (3.0 * x * g,))  # WRONG: 3 * x, not 2 * x
