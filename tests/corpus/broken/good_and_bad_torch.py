"""Two ops in one file: GoodRoundSTE is correct, BadBackward raises in backward (marked line).

The failure of one op must not hide the results of the other.
GoodRoundSTE with upstream ones: custom gradient all ones.
"""
import torch


class GoodRoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class BadBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("good_and_bad_torch: BadBackward failed on purpose")  # FAILS HERE
