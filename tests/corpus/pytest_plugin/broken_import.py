"""An op file that cannot be imported: a collection error naming this line."""
import torch

raise RuntimeError("this op file is broken on purpose")  # FAILS HERE


class Never(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g
