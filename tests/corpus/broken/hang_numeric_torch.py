"""A torch Function that hangs only in the numeric reference (the op built in float64): custom
and default run; the command line runs one pass, so the op times out as a whole (exit 3)."""
import time

import torch


class HangNumeric(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.dtype == torch.float64:
            time.sleep(3600)  # FAILS HERE  (only in the numeric pass)
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2
