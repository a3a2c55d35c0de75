"""The few torch steps the checks share: seeded leaves, one call of the op, a vector-Jacobian
product with chosen upstreams. Worker-only."""

from __future__ import annotations

import warnings

import numpy as np
import torch

from gradviz.backends.graphs import _args_from

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}


def leaves(ctx, dtype: str, variant: int = 0, requires_grad: bool = True) -> dict:
    return {
        n: torch.tensor(v, dtype=DTYPES[dtype], device=ctx.device, requires_grad=requires_grad)
        for n, v in ctx.arg_values(variant).items()
    }


def call(ctx, built, tensors: dict) -> list:
    """The op's differentiable outputs (integer or detached outputs are left out of the loss)."""
    return call_of(ctx.plans, built)(tensors)


def call_of(plans, built):
    """`call` as a function of the tensors alone, holding only the plans and the built op."""

    def call(tensors: dict) -> list:
        args, kwargs = _args_from(plans, tensors)
        return [o for o in built.call_op(args, kwargs) if o.requires_grad or o.grad_fn is not None]

    return call


def upstreams(ctx, outs: list, dtype=None) -> list:
    return [
        torch.as_tensor(ctx.upstream(i, tuple(o.shape)), dtype=dtype or o.dtype, device=o.device)
        for i, o in enumerate(outs)
    ]


def training_grads(outs: list, inputs: list, ups: list, create_graph: bool = False) -> list:
    """Gradients of sum(up * out) w.r.t. the leaf `inputs` as training takes them, and as custom
    mode does (backends/torch_grads.py): torch.autograd.backward, then each leaf's .grad (cleared
    before and after), so a gradient the backward writes into an input's .grad itself (a nested
    torch.autograd.backward on a recomputed graph, as checkpointing does) counts; autograd.grad
    returned None there, and a check compared None with None. None where no gradient arrived.
    `create_graph`: the gradients keep their graph, to be differentiated again (double_backward).
    No `inputs=`: torch's reentrant checkpoint refuses it, as it refuses autograd.grad."""
    if not outs:
        return [None] * len(inputs)
    for x in inputs:
        x.grad = None
    try:
        with warnings.catch_warnings():  # create_graph with .grad: torch's reference-cycle note
            warnings.simplefilter("ignore", UserWarning)
            torch.autograd.backward(outs, grad_tensors=ups, create_graph=create_graph)
        if create_graph:
            return [x.grad for x in inputs]
        return [None if x.grad is None else x.grad.detach().clone() for x in inputs]
    finally:
        for x in inputs:
            x.grad = None


def vjp(outs: list, inputs: list, ups: list, create_graph: bool = False) -> list:
    """Gradients of sum(up * out) w.r.t. inputs; None where no path."""
    if not outs:
        return [None] * len(inputs)
    return list(
        torch.autograd.grad(
            outs, inputs, grad_outputs=ups, allow_unused=True, create_graph=create_graph
        )
    )


def numpy(t) -> np.ndarray:
    return t.detach().to("cpu", torch.float64).numpy() if t is not None else None


def no_outputs(ctx) -> str:
    return f"{ctx.info.name} returns no output that requires a gradient: nothing to differentiate"
