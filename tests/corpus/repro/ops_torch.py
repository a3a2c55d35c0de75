"""Ops for the reproduction scripts' tests (tests/test_repro_graphs.py): torch, with reference=."""
import torch

import gradviz


class Cube(torch.autograd.Function):
    """match: a correct backward"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x


class HalfTanh(torch.autograd.Function):
    """differs: half the true gradient"""

    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return 0.5 * g * (1 - y * y)


def _cube_with_an_error(x):
    return x * x * x + 0.25 * x        # not the forward: custom and default differ by 0.25


@gradviz.op(reference=_cube_with_an_error)
class CubeWithReference(torch.autograd.Function):
    """default is the reference= function"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x


class ScaleFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * s, (g * x).sum(0) if g.dim() > 1 else g * x


@gradviz.op(reference=lambda self, x: x * self.scale * 1.5)
class Scaled(torch.nn.Module):
    """a Module with a parameter; its reference= takes the module first (and scales by 1.5)"""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(6))

    def forward(self, x):
        return ScaleFn.apply(x, self.scale)
