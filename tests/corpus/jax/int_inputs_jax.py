"""masked_nll of tests/test_int_inputs.py as a JAX custom_vjp: an int64 target and a bool mask.
JAX without x64 holds the int64 target as int32; no mode differentiates either (no-gradient, as
torch's and TF's twins read), and the rule returns None for both."""
import jax
import jax.numpy as jnp

import gradviz


@gradviz.op(
    name="masked_nll",
    inputs={
        "x": (20, 10),
        "target": {"shape": (20,), "dtype": "int64", "range": (0, 9)},
        "mask": {"shape": (20,), "dtype": "bool"},
    },
)
@jax.custom_vjp
def masked_nll(x, target, mask):
    return -jnp.take_along_axis(x, target[:, None], axis=1)[:, 0] * mask


def _fwd(x, target, mask):
    return masked_nll(x, target, mask), (x.shape[1], target, mask)


def _bwd(res, g):
    classes, target, mask = res
    onehot = jax.nn.one_hot(target, classes, dtype=g.dtype)
    return -(g * mask)[:, None] * onehot, None, None


masked_nll.defvjp(_fwd, _bwd)
