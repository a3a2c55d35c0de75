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


class CosWrongSign(torch.autograd.Function):
    """expect: GV305-grad-sign-flipped"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.cos(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sin(x)   # TRIGGER: d/dx cos(x) = -sin(x)


@gradviz.op(inputs={"x": (3, 4), "w": (4, 5)})
class MatmulTransposedGrad(torch.autograd.Function):
    """expect: GV306-grad-transposed"""
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, grad_output):
        x, w = ctx.saved_tensors
        return grad_output @ w.T, (grad_output.T @ x).reshape(w.shape)   # TRIGGER: x.T @ g


class MulSwappedGrads(torch.autograd.Function):
    """expect: GV307-grads-swapped"""
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad_output):
        x, w = ctx.saved_tensors
        return grad_output * x, grad_output * w   # TRIGGER: d/dx (x w) = w


@gradviz.op(inputs={"x": (4, 4), "b": (4,)})
class BiasTanhWrongAxis(torch.autograd.Function):
    """expect: GV308-grad-wrong-axis"""
    @staticmethod
    def forward(ctx, x, b):
        y = torch.tanh(x + b)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        d = grad_output * (1 - y * y)
        return d, d.sum(1)   # TRIGGER: b is broadcast along axis 0: d.sum(0)


class SinBfloat16Grad(torch.autograd.Function):
    """expect: GV110-grad-rounded"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return (grad_output * torch.cos(x)).bfloat16().float()   # TRIGGER


class SinBfloat16Returned(torch.autograd.Function):
    """expect: GV103-grad-dtype"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return (grad_output * torch.cos(x)).bfloat16()   # TRIGGER: autograd casts it to float32


class RoundPushedBack(torch.autograd.Function):
    """expect: GV309-surrogate-against-step"""
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output   # TRIGGER


class SoftmaxDiagonalOnly(torch.autograd.Function):
    """expect: GV301-grad-wrong (not GV302: under upstream ones a softmax's true gradient is 0
    everywhere, by the upstream's cancellation, not by a flat forward)"""
    @staticmethod
    def forward(ctx, x):
        y = torch.softmax(x, -1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)   # TRIGGER: the Jacobian's diagonal only


class ReverseLayerF(torch.autograd.Function):
    """expect: GV302-grad-surrogate (DANN's layer as its repository writes it, with no name
    or docstring saying what its backward does on purpose; its forward is the identity)"""

    @staticmethod
    def forward(ctx, x, alpha=1.0):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        output = grad_output.neg() * ctx.alpha
        return output, None   # TRIGGER


class ClampSignSlip(torch.autograd.Function):
    """expect: GV305-grad-sign-flipped (a clamp the drawn inputs, in [-3, 3], leave unchanged:
    its numbers are the identity's, its source is not, so a negated gradient is a bug)"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(-5.0, 5.0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return -grad_output * (x.abs() <= 5.0)   # TRIGGER: the sign slipped
