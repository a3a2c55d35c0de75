"""Diagnostics corpus: correct PyTorch twins of triggers_torch.py: no warning or error expected."""
import torch

import gradviz
from torch import nn


class TwoGrads(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad_output):
        x, w = ctx.saved_tensors
        return grad_output * w, grad_output * x


@gradviz.op(consts={"k": 3.0})
class ConstantGetsNone(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k=3.0):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.k, None


class CubeGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x ** 2


class SafeDivide(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.cos(x)


class InPlaceOnCopy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x.clone()
        x.add_(1)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class IntermediateOnCtx(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mask = x > 0
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.mask


class PlainModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(200))

    def forward(self, x):
        return torch.tanh(x) * self.scale
