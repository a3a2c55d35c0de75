"""A torch Function whose backward reads address 0 through ctypes: a real segmentation fault."""
import ctypes

import torch


class NullReadBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        ctypes.string_at(0)  # FAILS HERE  (SIGSEGV)
        return grad_output * 2
