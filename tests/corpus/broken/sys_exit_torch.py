"""A torch Function whose forward calls sys.exit(3) (raises SystemExit, marked line)."""
import sys

import torch


class SysExitForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sys.exit(3)  # FAILS HERE
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2
