"""Traps: PyTorch custom-backward mistakes from well-known tutorials, one op each.

Every op below is WRONG on purpose, so gradviz can show what each mistake looks like.
Behaviour noted here was checked with torch 2.13 (CPU).
"""
import numpy as np
import torch

import gradviz


@gradviz.op(name="trap_too_many_grads")
class TooManyGrads(torch.autograd.Function):
    """backward must return exactly one value per forward input (here: one)."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        # WRONG: two gradients for one input. torch raises at backward time:
        # "RuntimeError: function TooManyGradsBackward returned an incorrect number of gradients
        # (expected 1, got 2)". (Extra values that are None are tolerated; tensors are not.)
        return grad_output * 2, grad_output


@gradviz.op(name="trap_detached_forward")
class DetachedForward(torch.autograd.Function):
    """The forward leaves torch for numpy, so autograd cannot follow it.

    Inside Fn.apply this is fine (your backward supplies the gradient), but the *default*
    mode (torch's own autodiff of this forward) has no path: the output does not require
    grad. gradviz shows "no gradient path" in the default column (GV501 names the numpy line)
    and the verdict `match`: custom is judged against numeric, the truth, and agrees with it;
    the missing default is a note, not a fault of custom (a wrong backward would read differs).
    """

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        # WRONG for autodiff: .detach() and .numpy() cut the graph.
        return torch.from_numpy(np.tanh(x.detach().cpu().numpy())).to(x.device)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (1 - torch.tanh(x) ** 2)   # the correct tanh derivative


@gradviz.op(name="trap_inplace_no_mark_dirty")
class InPlaceNoMarkDirty(torch.autograd.Function):
    """An in-place forward that does not call ctx.mark_dirty(x).

    torch 2.13 raises nothing here, but: the caller's input tensor is silently overwritten
    (after the call x holds 2*x), and any tensor autograd saved from x earlier is now stale,
    so a graph that also uses x elsewhere fails at backward with "one of the variables needed
    for gradient computation has been modified by an inplace operation". The fix is
    `ctx.mark_dirty(x)` before returning x (or, simpler, not working in place).
    torch's own autodiff refuses this forward ("a leaf Variable that requires grad is being
    used in an in-place operation"), so gradviz gives `x` the verdict `error` (the custom
    gradient agrees with numeric only at the values before the call) and warns GV605.
    """

    @staticmethod
    def forward(ctx, x):
        return x.mul_(2)    # WRONG: modifies the input in place without ctx.mark_dirty(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2
