"""A torch Function whose backward never returns (a pure-Python busy loop): needs a timeout."""
import torch


class HangBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        while True:  # FAILS HERE  (never returns)
            pass
