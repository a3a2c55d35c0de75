"""DANGER: allocates memory without bound in forward. Run ONLY under a memory limit.

Each step keeps another 1e8-element float32 tensor (400 MB, filled so the pages are really
used) until the process is killed or an allocation fails (marked line).
"""
import torch


class MemoryHog(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        hoard = []
        while True:
            hoard.append(torch.ones(100_000_000))  # FAILS HERE  (unbounded allocation)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
