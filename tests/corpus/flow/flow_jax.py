"""The JAX twins of flow_torch.py (same names, same expected flow)."""

import jax
import jax.numpy as jnp

import gradviz

LAMBDA = 0.5


@gradviz.op(name="reverse_grad")
@jax.custom_vjp
def reverse_grad(x):
    return x


reverse_grad.defvjp(lambda x: (x, None), lambda res, g: (-LAMBDA * g,))


@gradviz.op(name="sign_ste")
@jax.custom_vjp
def sign_ste(x):
    return jnp.sign(x)


sign_ste.defvjp(lambda x: (jnp.sign(x), x), lambda x, g: (g * (jnp.abs(x) <= 1).astype(g.dtype),))


@gradviz.op(name="smooth_tanh")
@jax.custom_jvp
def smooth_tanh(x):
    return jnp.tanh(x)


@smooth_tanh.defjvp
def _smooth_tanh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = jnp.tanh(x)
    return y, t * (1 - y * y)
