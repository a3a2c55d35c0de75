"""RoundSTE written in the `forward(...)` + `setup_context(ctx, inputs, output)` style (no gradviz
import: zero configuration).

Expected with upstream ones: out = round(x) (half to even); custom gradient dL/dx = all ones;
default gradient (torch's autodiff of round) = all zeros -> verdict `surrogate`.
"""
import torch


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.round(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass  # nothing to save: the straight-through gradient needs no forward values

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
