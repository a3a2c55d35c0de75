"""Tutorial: rewrite the backward pass of a PyTorch op (the classic "MulLayer" example).

A torch.autograd.Function has two static methods:
  forward(ctx, *inputs)          computes the output and saves what backward needs on `ctx`;
  backward(ctx, grad_output)     receives dLoss/dOutput and returns one gradient per forward input
                                 (None for inputs that need no gradient).
An nn.Module then uses the Function through `Fn.apply(...)` (never call forward directly).

gradviz finds every Function and Module below and compares your backward ("custom") with
PyTorch's own autodiff of the same forward ("default") and with finite differences ("numeric").
The TF twins live in tutorial_tf.py; the same @gradviz.op name pairs them for a parity check.
"""
import torch
from torch import nn

import gradviz


@gradviz.op(name="mul_weights")
class MulWeights(torch.autograd.Function):
    """out = x * weights, element-wise, with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, weights):
        ctx.save_for_backward(x, weights)   # keep the inputs: the gradients need them
        return x * weights

    @staticmethod
    def backward(ctx, grad_output):
        x, weights = ctx.saved_tensors
        # d(x*w)/dx = w and d(x*w)/dw = x; chain rule: multiply by the incoming gradient.
        # One return value per forward input, in the same order.
        return grad_output * weights, grad_output * x


@gradviz.op(name="mul_layer")
class MulLayer(nn.Module):
    """A layer owning trainable weights, whose gradient comes from MulWeights.backward."""

    def __init__(self, size=200):
        super().__init__()
        # The parameter name "weights" matches the TF layer, so gradviz seeds both identically.
        self.weights = nn.Parameter(torch.ones(size))

    def forward(self, x):
        return MulWeights.apply(x, self.weights)


@gradviz.op(name="round_ste")
class RoundSTE(torch.autograd.Function):
    """Straight-through estimator: round in the forward, pretend it was identity in the backward.

    The true derivative of round() is 0 almost everywhere, which would stop all learning;
    the STE passes the incoming gradient through unchanged instead. gradviz shows this as a
    `surrogate` verdict: custom differs from the numeric derivative only where that is zero.
    """

    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
