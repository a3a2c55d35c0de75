"""A torch Function whose forward raises ValueError (on the marked line)."""
import torch


class RaiseForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        raise ValueError("raise_forward_torch: forward failed on purpose")  # FAILS HERE

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
