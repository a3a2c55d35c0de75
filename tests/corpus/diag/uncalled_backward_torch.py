"""The seed tutorial's trap in PyTorch: an nn.Module with a backward-shaped method that autograd
never calls (GV607 at the line marked NEVER CALLED). Gradients: Double, WithFunction and
IgnoresUpstream all differentiate x * x, so every correct gradient of x is 2 x; Hooked doubles
it (4 x) through a tensor hook."""
import torch
from torch import nn


class Double(nn.Module):
    """backward() meant to give 2 * grad; autograd differentiates forward itself: custom is its
    own autodiff, the custom gradient is not found (broken)."""
    def forward(self, x):
        return x * x

    def backward(self, grad_output):  # NEVER CALLED
        return 2 * grad_output


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g


class WithFunction(nn.Module):
    """A real Function in forward (its backward runs) and a leftover backward(): the finding,
    and the Function's own verdict (match)."""
    def forward(self, x):
        return Square.apply(x)

    def backward(self, grad_output):  # NEVER CALLED
        return 2 * grad_output


class IgnoresUpstream(nn.Module):
    """A never-called get_gradient that also ignores its upstream: GV607, not GV108 (it is not
    the op's backward)."""
    def forward(self, x):
        return x * x

    def get_gradient(self, grad_output):  # NEVER CALLED
        return torch.ones(200) * 2


class Hooked(nn.Module):
    """A tensor hook changes the gradient (4 x): the finding, but custom is no plain autodiff,
    so not "custom gradient not found"."""
    def forward(self, x):
        y = x * x
        y.register_hook(lambda g: g * 2)
        return y

    def backward(self, grad_output):  # NEVER CALLED
        return 2 * grad_output


class CallsItsGrad(nn.Module):
    """forward calls its own grad-named helper: it is called, no finding."""
    def forward(self, x):
        return x * self.grad_scale(x)

    def grad_scale(self, x):
        return x


class Utilities(nn.Module):
    """Methods about gradients that are no gradient formula: no finding."""
    def forward(self, x):
        return x * x

    def zero_grad(self, set_to_none=True):
        super().zero_grad(set_to_none)

    def compute_gradient(self, x):
        x = x.detach().requires_grad_(True)
        return torch.autograd.grad(self(x).sum(), x)[0]
