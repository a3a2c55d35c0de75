"""JAX rule mistakes of each class the diagnostics name, in other shapes than the built-in
traps_jax.py (lambdas, two arguments, other containers), and right rules beside them that no
trap finding may name. Each wrong op's line that the finding names says `# GVxxx`."""
from functools import partial

import equinox as eqx
import flax.nnx as nnx
import jax
import jax.numpy as jnp

import gradviz


@jax.custom_vjp
def no_tuple(x):
    return 2.0 * x


no_tuple.defvjp(lambda x: (2.0 * x, None), lambda res, g: 2.0 * g)  # GV101


@jax.custom_vjp
def too_few(x, y):
    return x * y


def _too_few_bwd(res, g):
    x, y = res
    return (g * y,)  # GV101


too_few.defvjp(lambda x, y: (x * y, (x, y)), _too_few_bwd)


@jax.custom_vjp
def summed(x):
    return 2.0 * x


summed.defvjp(lambda x: (2.0 * x, None), lambda res, g: (jnp.sum(2.0 * g),))  # GV102


@jax.custom_vjp
def fwd_output_only(x):
    return jnp.sin(x)


def _fwd_output_only_fwd(x):
    return jnp.sin(x)  # GV608


fwd_output_only.defvjp(_fwd_output_only_fwd, lambda res, g: (g * jnp.cos(res),))


@jax.custom_vjp
def none_residuals(x):
    return jnp.sin(x)


def _none_residuals_bwd(res, g):
    (c,) = res  # GV608
    return (g * c,)


none_residuals.defvjp(lambda x: (jnp.sin(x), None), _none_residuals_bwd)


@jax.custom_vjp
def dict_residuals(x):
    return jnp.sin(x)


def _dict_residuals_fwd(x):
    return jnp.sin(x), {"cos": jnp.cos(x)}


dict_residuals.defvjp(_dict_residuals_fwd, lambda res, g: (g * res["c"],))  # GV608


@jax.custom_vjp
def index_residuals(x):
    return jnp.sin(x)


def _index_residuals_bwd(res, g):
    return (g * res[0] * res[1],)  # GV608


index_residuals.defvjp(lambda x: (jnp.sin(x), (jnp.cos(x),)), _index_residuals_bwd)


@jax.custom_jvp
def abs_tangent(x):
    return jnp.abs(x)


@abs_tangent.defjvp
def _abs_tangent_jvp(primals, tangents):
    (x,) = primals
    (x_dot,) = tangents
    return jnp.abs(x), jnp.abs(x_dot)  # GV609


@jax.custom_jvp
def squared_tangent(x):
    return jnp.sin(x)


squared_tangent.defjvp(lambda p, t: (jnp.sin(p[0]), jnp.cos(p[0]) * t[0] ** 2))  # GV609


@jax.custom_jvp
def over_tangent(x):
    return jnp.sin(x)


@over_tangent.defjvp
def _over_tangent_jvp(primals, tangents):
    x, t = primals[0], tangents[0]
    return jnp.sin(x), jnp.cos(x) / t  # GV609


@jax.custom_jvp
def summed_tangent(x):
    return jnp.sin(x)


@summed_tangent.defjvp
def _summed_tangent_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return jnp.sin(x), jnp.sum(jnp.cos(x) * t)  # GV102


@gradviz.op(consts={"s": 2.0})  # a constant where nondiff_argnums wants one: right
@partial(jax.custom_vjp, nondiff_argnums=(0,))
def scaled_by(s, x):
    return s * x


scaled_by.defvjp(lambda s, x: (s * x, None), lambda s, res, g: (s * g,))


class NnxNondiff(nnx.Module):
    def __init__(self, n: int = 200):
        self.s = nnx.Param(jnp.ones((n,)))

    def __call__(self, x):
        return scaled_by(self.s.value, x)  # GV610


@eqx.filter_custom_vjp
def eqx_tuple(x):
    return 2.0 * x


@eqx_tuple.def_fwd
def _eqx_tuple_fwd(perturbed, x):
    return 2.0 * x, None


@eqx_tuple.def_bwd
def _eqx_tuple_bwd(residuals, g, perturbed, x):
    return (2.0 * g,)  # GV101


@eqx.filter_custom_vjp
def eqx_residuals(x):
    return jnp.sin(x)


@eqx_residuals.def_fwd
def _eqx_residuals_fwd(perturbed, x):
    return jnp.sin(x), jnp.cos(x)


@eqx_residuals.def_bwd
def _eqx_residuals_bwd(residuals, g, perturbed, x):
    c, s = residuals  # GV608
    return g * c


class EqxCallsNonlinear(eqx.Module):
    """A Module whose rule is wrong: the finding names the rule's line, not the Module's."""

    scale: jax.Array

    def __init__(self, n: int = 200):
        self.scale = jnp.ones((n,))

    def __call__(self, x):
        return abs_tangent(x) * self.scale + no_tuple(x)


@jax.custom_jvp
def tangent_only(x):
    return jnp.sin(x)


tangent_only.defjvp(lambda p, t: jnp.cos(p[0]) * t[0])  # GV611


@jax.custom_jvp
def three_returned(x):
    return jnp.sin(x)


@three_returned.defjvp
def _three_returned_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    y = jnp.sin(x)
    return y, jnp.cos(x) * t, y  # GV611


@jax.custom_jvp
def tangent_in_tuple(x):
    return jnp.sin(x)


@tangent_in_tuple.defjvp
def _tangent_in_tuple_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return jnp.sin(x), (jnp.cos(x) * t,)  # GV611


class CallsTangentOnly(nnx.Module):
    def __init__(self):
        self.scale = nnx.Param(jnp.ones(()))

    def __call__(self, x):
        return self.scale.value * tangent_only(x)


# --- right rules: no trap finding, verdict match ---------------------------------------------


@jax.custom_vjp
def right_product(x, y):
    return x * y


def _right_product_fwd(x, y):
    return x * y, (x, y)


def _right_product_bwd(res, g):
    x, y = res
    return g * y, g * x


right_product.defvjp(_right_product_fwd, _right_product_bwd)


@jax.custom_vjp
def right_lambda(x):
    return jnp.sin(x)


right_lambda.defvjp(lambda x: (jnp.sin(x), (jnp.cos(x),)), lambda res, g: (g * res[0],))


@jax.custom_jvp
def right_tanh(x):
    return jnp.tanh(x)


@right_tanh.defjvp
def _right_tanh_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    y = jnp.tanh(x)
    return y, (1.0 - y * y) * t


@jax.custom_jvp
def right_two(x, y):
    return x * jnp.sin(y)


right_two.defjvps(lambda tx, ans, x, y: tx * jnp.sin(y), lambda ty, ans, x, y: ty * x * jnp.cos(y))


@jax.custom_jvp
def right_list_pair(x):
    return jnp.sin(x)


right_list_pair.defjvp(lambda p, t: [jnp.sin(p[0]), jnp.cos(p[0]) * t[0]])  # a list pair: JAX's too


@jax.custom_jvp
def right_dict_pair(x):
    return {"s": jnp.sin(x), "c": jnp.cos(x)}


@right_dict_pair.defjvp
def _right_dict_pair_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return right_dict_pair(x), {"s": jnp.cos(x) * t, "c": -jnp.sin(x) * t}


@jax.custom_jvp
def asserts_in_primal(x):
    assert x.ndim == 2, "takes a matrix"  # the user's own assert: no tangent rule's fault
    return jnp.sin(x)


@asserts_in_primal.defjvp
def _asserts_in_primal_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return asserts_in_primal(x), jnp.cos(x) * t


@eqx.filter_custom_vjp
def eqx_right(x):
    return jnp.sin(x)


@eqx_right.def_fwd
def _eqx_right_fwd(perturbed, x):
    return jnp.sin(x), (jnp.cos(x),)


@eqx_right.def_bwd
def _eqx_right_bwd(residuals, g, perturbed, x):
    (c,) = residuals
    return g * c


@jax.custom_jvp
def says_nonlinear(x):
    if x.ndim != 2:  # the user's own error, worded like JAX's: no tangent rule's fault
        raise ValueError("nonlinear solver: can't be transposed without a matrix")
    return jnp.sin(x)


@says_nonlinear.defjvp
def _says_nonlinear_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return says_nonlinear(x), jnp.cos(x) * t
