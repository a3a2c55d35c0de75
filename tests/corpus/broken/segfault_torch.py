"""A torch Function whose backward kills its own process with SIGSEGV (marked line).

The worker dies with a signal: gradviz must report a crash and start a fresh worker.
"""
import os
import signal

import torch


class SegfaultBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        os.kill(os.getpid(), signal.SIGSEGV)  # FAILS HERE
        return grad_output * 2
