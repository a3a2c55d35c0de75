"""Verdict classes of issue 24, in PyTorch: each op's docstring ends with the verdict its `x` reads
(`verdict: ...`), which tests/test_corpus_verdicts.py checks, with the same class in TensorFlow
in classes_tf.py. Every gradient here was worked out by hand."""
import numpy as np
import torch

import gradviz

SCALE = 100.0     # softplus(100 x) / 100: exp(100 x) overflows float32 for x > 0.89


class NoGraphForward(torch.autograd.Function):
    """An exact backward for a forward computed without a graph (an adjoint, a solver under
    no_grad): default has no path, custom is right. verdict: match"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with torch.no_grad():
            return torch.tanh(x) * 3.0

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3.0 * (1 - torch.tanh(x) ** 2)


class NoGraphWrong(torch.autograd.Function):
    """The same forward with a backward twice too big: only numeric can tell. verdict: differs"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with torch.no_grad():
            return torch.tanh(x) * 3.0

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 6.0 * (1 - torch.tanh(x) ** 2)


class StableSoftplus(torch.autograd.Function):
    """softplus(100 x) / 100 through torch.where: the default's untaken branch overflows and
    gives 0 * inf = NaN wherever x > 0.89; custom is the exact sigmoid(100 x). verdict: match"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        z = SCALE * x
        return torch.where(z > 0, z + torch.log1p(torch.exp(-z)), torch.log1p(torch.exp(z))) / SCALE

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * torch.sigmoid(SCALE * x)


class Recomputed(torch.autograd.Function):
    """Saves only its input and recomputes the forward inside backward, as checkpointing does.
    verdict: match"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x) * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        with torch.enable_grad():
            xr = x.detach().requires_grad_()
            y = torch.sin(xr) * xr
            gx, = torch.autograd.grad(y, xr, g)
        return gx


class RoundSTE(torch.autograd.Function):
    """round forward, identity backward: 1 where the true derivative is 0. verdict: surrogate"""
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return g


class DetachSTE(torch.nn.Module):
    """The same estimator written with .detach(), no backward of its own. verdict: surrogate"""
    def forward(self, x):
        return x + (torch.round(x) - x).detach()


class StochasticSTE(torch.autograd.Function):
    """sign forward; the backward passes the gradient where a fresh coin says so (a stochastic
    straight-through estimator): a random surrogate. verdict: surrogate"""
    @staticmethod
    def forward(ctx, x):
        return torch.sign(x)

    @staticmethod
    def backward(ctx, g):
        return g * (torch.rand_like(g) < 0.5).to(g.dtype) * 2.0


class BackwardsSTE(torch.autograd.Function):
    """round forward (non-decreasing) with the negated identity as its surrogate: it pushes
    against the step's direction, a warning (GV309). verdict: surrogate"""
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return -g


class Reversal(torch.autograd.Function):
    """Gradient reversal: identity forward, -g backward; off numeric where it is 1. verdict: differs"""
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return -g


class ViaNumpy(torch.autograd.Function):
    """The forward leaves torch for numpy; exact backward. verdict: match"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.from_numpy(np.exp(x.detach().cpu().numpy()) * 0.5).to(x.device)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * torch.exp(x) * 0.5


class LastElementMissed(torch.autograd.Function):
    """x**2 whose backward loops one element short: the last gradient stays 0. One of 200 off
    numeric, within the kinks' 1 in 100, but x**2 has no kink: default agrees with numeric
    there. verdict: differs"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        out = torch.zeros_like(x)
        out[:-1] = 2 * x[:-1] * g[:-1]
        return out


# 200 inputs, one of them an exact 0 (a kink of relu and abs)
WITH_ZERO = np.concatenate([np.linspace(-3.0, -0.01, 100), [0.0], np.linspace(0.013, 3.0, 99)])


@gradviz.op(inputs={"x": WITH_ZERO})
class ReluKink(torch.autograd.Function):
    """relu with the subgradient 1 at 0, at inputs with an exact 0: numeric reads 0.5 there,
    default 0; a kink, as both autodiff answers are off numeric. verdict: match"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * (x >= 0).to(g.dtype)


@gradviz.op(inputs={"x": WITH_ZERO})
class AbsAtZero(torch.autograd.Function):
    """abs with the subgradient 1 at an exact 0, where numeric and default both read 0: a
    kink all the same (numeric 0 leaves it to the kinks' allowance). verdict: match"""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.abs()

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * torch.where(x >= 0, 1.0, -1.0).to(g.dtype)


TIE_X = np.round(np.linspace(-2.9, 2.9, 200), 3)
TIE_Y = np.where(np.arange(200) == 57, TIE_X, TIE_X[::-1])  # one tie of max(x, y), at x[57]


@gradviz.op(inputs={"x": TIE_X, "y": TIE_Y})
class MaxTieToFirst(torch.autograd.Function):
    """max(x, y) giving a tie's whole gradient to x: numeric and torch's default read 0.5 there
    (a kink at a value the user placed), custom 1; a subgradient. verdict: match"""
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return torch.maximum(x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        first = (x >= y).to(g.dtype)
        return g * first, g * (1 - first)
