"""torch halves of the JAX twins (twins_jax.py): both exact, x**3 with backward 3x^2 g."""
import torch

import gradviz


@gradviz.op(name="cube")
class CubeTorch(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3.0 * x ** 2 * g


@gradviz.op(name="cube_off")
class CubeOffTorch(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3.0 * x ** 2 * g
