"""JAX halves of torch twins (twins_torch.py), paired by name: cube (x**3, bwd 3x^2 g in both:
parity match) and cube_off (the JAX bwd says 2x^2 g: parity differs in custom, matches in
value, default and numeric)."""
import jax

import gradviz


@gradviz.op(name="cube")
@jax.custom_vjp
def cube_jax(x):
    return x ** 3


cube_jax.defvjp(lambda x: (x ** 3, x), lambda x, g: (3.0 * x ** 2 * g,))


@gradviz.op(name="cube_off")
@jax.custom_vjp
def cube_off_jax(x):
    return x ** 3


cube_off_jax.defvjp(lambda x: (x ** 3, x), lambda x, g: (2.0 * x ** 2 * g,))
