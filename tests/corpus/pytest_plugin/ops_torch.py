"""Ops for the pytest plugin's test (tests/test_testing_plugin.py): what each should give is
in its docstring."""
import torch

import gradviz


class Square(torch.autograd.Function):
    """passes: match"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


class HalfSquare(torch.autograd.Function):
    """fails: differs (half the true gradient)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


@gradviz.op(name="round_ste")
class RoundSTE(torch.autograd.Function):
    """passes: surrogate"""

    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return g


@gradviz.op(expect="differs")
class Reversal(torch.autograd.Function):
    """passes: differs, as expect= says (a gradient reversal on purpose)"""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return -g


@gradviz.op(expect="surrogate")
class NotASurrogate(torch.autograd.Function):
    """fails: expected surrogate, got match"""

    @staticmethod
    def forward(ctx, x):
        return 3 * x

    @staticmethod
    def backward(ctx, g):
        return 3 * g
