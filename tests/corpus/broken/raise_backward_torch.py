"""A torch Function whose forward works and whose backward raises ValueError (marked line)."""
import torch


class RaiseBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        raise ValueError("raise_backward_torch: backward failed on purpose")  # FAILS HERE
