"""Tutorial: write the gradient of a JAX function (the JAX twins of tutorial_torch.py).

JAX has two ways to give a function a gradient of your own:
  @jax.custom_vjp   f.defvjp(fwd, bwd): fwd(*args) returns (output, residuals), the values bwd
                    needs; bwd(residuals, g) receives dLoss/dOutput (the cotangent g) and returns
                    a TUPLE with one cotangent per argument of f, in order.
  @jax.custom_jvp   @f.defjvp jvp(primals, tangents) returns (output, tangent output); the tangent
                    output must be LINEAR in the tangents (jax.grad transposes it).
A flax or equinox Module uses such a function in its __call__.

gradviz finds every rule and Module below and compares your rule ("custom") with JAX's own
autodiff of the function with every rule removed ("default") and with finite differences
("numeric"). The same @gradviz.op name pairs an op with its torch and TF twins for parity.
"""
import equinox as eqx
import jax
import jax.numpy as jnp

import gradviz


@gradviz.op(name="mul_weights")
@jax.custom_vjp
def mul_weights(x, weights):
    """out = x * weights, element-wise, with a hand-written bwd."""
    return x * weights


def _mul_weights_fwd(x, weights):
    return x * weights, (x, weights)  # (output, residuals): bwd gets the residuals back


def _mul_weights_bwd(res, g):
    x, weights = res
    # d(x*w)/dx = w and d(x*w)/dw = x, times the cotangent; one per argument, as a tuple.
    return g * weights, g * x


mul_weights.defvjp(_mul_weights_fwd, _mul_weights_bwd)


@gradviz.op(name="mul_layer")
class MulLayer(eqx.Module):
    """An equinox Module owning trainable weights, whose gradient comes from mul_weights' bwd.
    The field name "weights" matches the torch and TF layers, so gradviz seeds all alike."""

    weights: jax.Array

    def __init__(self, size=200):
        self.weights = jnp.ones(size)

    def __call__(self, x):
        return mul_weights(x, self.weights)


@gradviz.op(name="round_ste")
@jax.custom_vjp
def round_ste(x):
    """Straight-through estimator: round forward, identity backward.

    JAX's own derivative of jnp.round is 0 everywhere, which would stop all learning; the STE
    passes the cotangent through unchanged. With upstream ones custom is 1 and default 0
    everywhere: gradviz says `surrogate` (custom differs from numeric only where that is 0).
    """
    return jnp.round(x)


round_ste.defvjp(lambda x: (jnp.round(x), None), lambda res, g: (g,))


@gradviz.op(name="grad_reverse")
@jax.custom_vjp
def grad_reverse(x):
    """Gradient reversal (domain-adversarial training): identity forward, -g backward.

    custom is minus default at every element: the verdict is `differs`, and the diagnostics
    name it an intended gradient reversal (GV302) rather than a bug.
    """
    return x


grad_reverse.defvjp(lambda x: (x, None), lambda res, g: (-g,))


@gradviz.op(name="log1pexp")
@jax.custom_jvp
def log1pexp(x):
    """softplus log(1 + e^x), whose autodiff gradient e^x / (1 + e^x) overflows to NaN for
    large x; the rule gives the stable sigmoid(x) instead. It is the true derivative, so custom,
    default and numeric all agree here: `match`."""
    return jnp.log1p(jnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return log1pexp(x), jax.nn.sigmoid(x) * t  # linear in the tangent t
