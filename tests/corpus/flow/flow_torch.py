"""Ops whose gradient flow through the `stack` graph is known whatever the weights.

- reverse_grad: identity forward, backward multiplies by -LAMBDA. At depth N the custom gradient
  at h{i} is (-LAMBDA)^(N-i+1) times the default one, element by element.
- sign_ste: sign forward (autodiff: zero gradient), straight-through backward clipped to |x| <= 1:
  custom gradient at h{i} = (gradient at o{i}) * (|h{i}| <= 1), zero exactly where |h{i}| > 1.
- smooth_tanh: tanh with its correct backward: custom = default = numeric.
"""
import torch

import gradviz

LAMBDA = 0.5


@gradviz.op(name="reverse_grad")
class ReverseGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return -LAMBDA * g


@gradviz.op(name="sign_ste")
class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1).to(g.dtype)


@gradviz.op(name="smooth_tanh")
class SmoothTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - y * y)


class Total(torch.autograd.Function):
    """Changes the shape: cannot be stacked."""
    @staticmethod
    def forward(ctx, x):
        return x.sum()

    @staticmethod
    def backward(ctx, g):
        return g * torch.ones(8)
