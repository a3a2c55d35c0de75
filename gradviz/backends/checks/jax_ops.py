"""The few JAX steps the checks share: the op's arguments as arrays, one call of the op, the
gradient of sum(upstream * outputs) as a function for jax.jit / jax.vmap / jax.grad to
transform, and the wording of JAX's refusals. Worker-only."""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np

from gradviz.backends.jax_backend import x64_for
from gradviz.backends.jax_devices import device_of

DTYPES = {"float32": jnp.float32, "float64": jnp.float64}
# JAX's errors for a rule that needs concrete values where a transform hands it tracers
CONCRETE = (
    "TracerArrayConversionError",
    "ConcretizationTypeError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
)
FIX_TRACED = (
    "Keep the rule in jax.numpy / jax.lax ops: no numpy, float(), .item(), Python side "
    "effects (counters, globals, lists) or Python branches on array values in it (use "
    "jnp.where / jax.lax.cond); host code belongs in jax.pure_callback, with a vmap_method its "
    "host function really supports."
)


@contextlib.contextmanager
def scope(ctx, dtype: str):
    """The op's device, and jax_enable_x64 on for float64 work (as the backend runs it)."""
    with jax.default_device(device_of(ctx.device)), x64_for(dtype):
        yield


def arrays(ctx, dtype: str, variant: int = 0) -> dict:
    return {n: jnp.asarray(v, dtype=DTYPES[dtype]) for n, v in ctx.arg_values(variant).items()}


def outputs(ctx, built, tensors: dict) -> list:
    """The op's float outputs (integer ones have no gradient)."""
    args, kwargs = ctx.call_args(tensors)
    return [o for o in built.call_op(args, kwargs) if jnp.issubdtype(o.dtype, jnp.inexact)]


def upstreams(ctx, outs: list) -> list:
    return [jnp.asarray(ctx.upstream(i, tuple(o.shape)), dtype=o.dtype) for i, o in enumerate(outs)]


def grad_fn(ctx, built, names: list, ups: list):
    """xs -> the gradients of sum(ups * outputs) for each of `names` (jax.grad: zeros where an
    argument does not reach the outputs), a pure function of the arrays."""

    def loss(*xs):
        outs = outputs(ctx, built, dict(zip(names, xs)))
        return sum(jnp.sum(u * o) for u, o in zip(ups, outs))

    return jax.grad(loss, argnums=tuple(range(len(names))))


def numpy(t) -> np.ndarray:
    return np.asarray(t, dtype=np.float64)


def needs_concrete(exc: BaseException) -> bool:
    return type(exc).__name__ in CONCRETE
