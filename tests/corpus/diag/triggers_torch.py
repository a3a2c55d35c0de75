"""Diagnostics corpus: one PyTorch mistake per op; `expect:` in each docstring names the code."""
import torch
from torch import nn

import gradviz


class TooFewGrads(torch.autograd.Function):
    """expect: GV101-grad-count"""
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad_output):
        x, w = ctx.saved_tensors
        return grad_output * w   # TRIGGER


class ShortGrad(torch.autograd.Function):
    """expect: GV102-grad-shape"""
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output[:3] * 2   # TRIGGER


@gradviz.op(consts={"k": 3.0})
class GradForConstant(torch.autograd.Function):
    """expect: GV106-grad-for-non-tensor"""
    @staticmethod
    def forward(ctx, x, k=3.0):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.k, grad_output   # TRIGGER


class NoneForWeight(torch.autograd.Function):
    """expect: GV105-grad-missing"""
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(w)
        return x * w

    @staticmethod
    def backward(ctx, grad_output):
        (w,) = ctx.saved_tensors
        return grad_output * w, None   # TRIGGER


def _times_two(x):
    return x * 2


@gradviz.op(reference=_times_two)
class ForwardChanged(torch.autograd.Function):
    """expect: GV201-forward-changed"""
    @staticmethod
    def forward(ctx, x):   # TRIGGER
        return x * 3

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 3


class CubeWrongGrad(torch.autograd.Function):
    """expect: GV301-grad-wrong"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x   # TRIGGER: should be 3 * x ** 2


class GradReversal(torch.autograd.Function):
    """expect: GV302-grad-surrogate"""
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output   # TRIGGER


class ClippedSquare(torch.autograd.Function):
    """expect: GV302-grad-surrogate"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x.clamp(-1.0, 1.0)   # TRIGGER


@gradviz.op(inputs={"x": [-1.0, 0.0, 2.0, 0.0]})
class DivideByInput(torch.autograd.Function):
    """expect: GV401-non-finite"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 2 * x / x   # TRIGGER: 0/0 at x = 0


class DetachInModule(nn.Module):
    """expect: GV501-no-default-path"""
    def forward(self, x):
        return x.detach() * 2   # TRIGGER


class SaveTwice(torch.autograd.Function):
    """expect: GV604-save-for-backward"""
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x)
        ctx.save_for_backward(w)   # TRIGGER
        return x * w

    @staticmethod
    def backward(ctx, grad_output):
        (w,) = ctx.saved_tensors
        return grad_output * w, None


class InputAsCtxAttribute(torch.autograd.Function):
    """expect: GV604-save-for-backward"""
    @staticmethod
    def forward(ctx, x):
        ctx.x = x   # TRIGGER
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2 * ctx.x


class SaveConstant(torch.autograd.Function):
    """expect: GV604-save-for-backward"""
    @staticmethod
    def forward(ctx, x, k=2.0):
        ctx.save_for_backward(x, k)   # TRIGGER
        return x * k

    @staticmethod
    def backward(ctx, grad_output):
        x, k = ctx.saved_tensors
        return grad_output * k, None


class AddInPlace(torch.autograd.Function):
    """expect: GV605-inplace-no-mark-dirty"""
    @staticmethod
    def forward(ctx, x):
        x += 1   # TRIGGER
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
