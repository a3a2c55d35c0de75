"""Ops whose gradients only training's own way of taking them gets right (issue 24, 3-5).

Expected gradients, upstream u (ones by default):
- Checkpointed: out = w * x**2, recomputed in backward, whose nested torch.autograd.backward
  writes inner.w's gradient into inner.w.grad itself: x: 2 w x u, inner.w: sum(x**2 u).
  CheckpointedWithGraph: the same, with a default mode that has a graph.
- GraphOnce: out = x**3 through a graph the backward frees (a second backward raises
  "Trying to backward through the graph a second time"): x: 3 x**2 u.
- DropsState: out = 3 x**2; the backward deletes ctx.scale (a second backward raises
  AttributeError): x: 6 x u.
- Siblings: one Function returning y = 2 x and z = y * y: out: u, out1: u1, x: 2 u + 8 x u1.
- TwoOutputs: y = 2 x, z = y * y (out, out1): out: u + 2 y u1, out1: u1, x: 2 (u + 2 y u1).
- FrozenScale: out = x * w * frozen + x * noise, frozen = 5 (requires_grad=False) and noise a
  random buffer, both as the module built them: x: (5 w + noise) u, w: sum(5 x u); frozen has
  no gradient ("no gradient: frozen").
"""
import torch
from torch import nn


class _Recompute(torch.autograd.Function):
    """Checkpointing in miniature: the forward keeps no graph, the backward recomputes it and
    lets autograd write the layer's parameter gradients into their .grad."""

    @staticmethod
    def forward(ctx, x, layer):
        ctx.layer = layer
        ctx.save_for_backward(x)
        with torch.no_grad():
            return layer(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_()
        with torch.enable_grad():
            y = ctx.layer(x)
        torch.autograd.backward(y, g)
        return x.grad, None


class _Square(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor(1.0))

    def forward(self, x):
        return self.w * x * x


class Checkpointed(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Square()

    def forward(self, x):
        return _Recompute.apply(x, self.inner)


class _RecomputeWithGraph(_Recompute):
    """The same backward; a forward that builds the layer's graph when called outside autograd
    (the default mode runs it so), so default has gradients to compare with."""

    @staticmethod
    def forward(ctx, x, layer):
        ctx.layer = layer
        ctx.save_for_backward(x)
        return layer(x)


class CheckpointedWithGraph(Checkpointed):
    def forward(self, x):
        return _RecomputeWithGraph.apply(x, self.inner)


class GraphOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch.enable_grad():
            xd = x.detach().requires_grad_()
            y = xd ** 3
        ctx.inner = (xd, y)
        return y.detach()

    @staticmethod
    def backward(ctx, g):
        xd, y = ctx.inner
        (gx,) = torch.autograd.grad(y, xd, g)   # frees the inner graph
        return gx


class DropsState(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.scale = 3.0
        ctx.save_for_backward(x)
        return 3.0 * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        scale = ctx.scale
        del ctx.scale          # frees its state: a second backward raises AttributeError
        return g * 2 * scale * x


class _Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        return 2 * g


class Siblings(torch.autograd.Function):
    """Two outputs of one Function, the second computed from the first inside its forward:
    to autograd they are siblings (out: u, x: 2 u + 8 x u1)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = 2 * x
        return y, y * y

    @staticmethod
    def backward(ctx, gy, gz):
        (x,) = ctx.saved_tensors
        return 2 * gy + 8 * x * gz


class TwoOutputs(nn.Module):
    def forward(self, x):
        y = _Double.apply(x)
        return y, y * y


class FrozenScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor(1.0))
        self.frozen = nn.Parameter(torch.tensor(5.0), requires_grad=False)
        self.register_buffer("noise", torch.rand(()))

    def forward(self, x):
        return _Double.apply(x) * 0.5 * self.w * self.frozen + x * self.noise
