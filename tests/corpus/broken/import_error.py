"""A module that imports a package that does not exist: fails at import time, marked line."""
import torch

import gradviz_no_such_module_xyz  # FAILS HERE  (ModuleNotFoundError)


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
