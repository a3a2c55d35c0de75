"""equinox.filter_custom_vjp ops with known gradients (op graph, upstream ones):
eqx_round_ste: straight-through round: custom 1 everywhere, default 0 (round is flat), surrogate.
eqx_wrong_factor: forward x**2, bwd 3*x*g where the derivative is 2*x: differs.
eqx_scaled: a constant after vjp_arg (consts=, passed by keyword): custom = default = k, match.
eqx_ahead: a rule whose primal runs a jaxpr of eqx_round_ste made at import: that jaxpr keeps
its rule whatever the default mode swaps, so default is absent (OVERRIDE_KEPT).
eqx_two_arrays: a float array after vjp_arg, which equinox refuses to differentiate: refused
at its line."""
import equinox as eqx
import jax
import jax.numpy as jnp
from jax.extend.core import jaxpr_as_fun

import gradviz


@eqx.filter_custom_vjp
def eqx_round_ste(x):
    return jnp.round(x)


@eqx_round_ste.def_fwd
def _round_fwd(perturbed, x):
    return jnp.round(x), None


@eqx_round_ste.def_bwd
def _round_bwd(residuals, g, perturbed, x):
    return g


@eqx.filter_custom_vjp
def eqx_wrong_factor(x):
    return x * x


@eqx_wrong_factor.def_fwd
def _wrong_fwd(perturbed, x):
    return x * x, x


@eqx_wrong_factor.def_bwd
def _wrong_bwd(x, g, perturbed, x_again):
    return 3.0 * x * g


@gradviz.op(consts={"k": 3.0})
@eqx.filter_custom_vjp
def eqx_scaled(x, k):
    return x * k


@eqx_scaled.def_fwd
def _scaled_fwd(perturbed, x, k):
    return x * k, None


@eqx_scaled.def_bwd
def _scaled_bwd(residuals, g, perturbed, x, k):
    return g * k


_round_ahead = jaxpr_as_fun(jax.make_jaxpr(eqx_round_ste)(jnp.zeros(200)))


@eqx.filter_custom_vjp
def eqx_ahead(x):
    return 2.0 * _round_ahead(x)[0]


@eqx_ahead.def_fwd
def _ahead_fwd(perturbed, x):
    return eqx_ahead(x), None


@eqx_ahead.def_bwd
def _ahead_bwd(residuals, g, perturbed, x):
    return 2.0 * g


@eqx.filter_custom_vjp
def eqx_two_arrays(x, y):
    return x * y


@eqx_two_arrays.def_fwd
def _two_fwd(perturbed, x, y):
    return x * y, None


@eqx_two_arrays.def_bwd
def _two_bwd(residuals, g, perturbed, x, y):
    return g * y
