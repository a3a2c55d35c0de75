"""Ops that pass or fail each contract check (tests/test_checks_torch.py). Each docstring says
which check it fails and why; the torch tool that confirms it is called in the test."""
import torch
from torch.autograd.function import once_differentiable

import gradviz

STATE = {"calls": 0}


class Cube(torch.autograd.Function):
    """Passes every check: torch.func style, differentiable backward, no layout assumptions."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x * x


class CubeOnce(torch.autograd.Function):
    """double_backward: @once_differentiable, so differentiating the gradient again raises."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x * x


class CubeDetached(torch.autograd.Function):
    """double_backward: the backward detaches, so the second derivative is a silent zero."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * (x * x).detach()


@gradviz.op(inputs={"x": (4, 50)})
class ViewBack(torch.autograd.Function):
    """noncontiguous_upstream: .view on the upstream fails once it is not contiguous."""
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return (g.view(-1) * 2).view(ctx.shape)


class InplaceBack(torch.autograd.Function):
    """noncontiguous_upstream: writes into its upstream (grad_output.mul_)."""
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        g.mul_(2)
        return g


class OldStyle(torch.autograd.Function):
    """vmap: forward(ctx, ...) without setup_context: torch.func refuses it."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 2 * x


class NoVmapRule(torch.autograd.Function):
    """vmap: setup_context style but neither generate_vmap_rule nor a vmap staticmethod."""
    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 2 * x


@gradviz.op(inputs={"x": (4, 8), "w": (8, 3)})
class LinearMixed(torch.autograd.Function):
    """autocast: saves float32 inputs, gets a bfloat16 grad_output: mm of mixed dtypes."""
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.t(), x.t() @ g


@gradviz.op(inputs={"x": (4, 8), "w": (8, 3)})
class LinearAmp(torch.autograd.Function):
    """autocast: passes, with torch.amp.custom_fwd/custom_bwd."""
    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.t(), x.t() @ g


class SquareCancel(torch.autograd.Function):
    """precision: 2x computed as ((x + 1e5) - 1e5) * 2 loses float32 bits; right in float64."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * ((x + 1e5) - 1e5) * 2


class SquareWrong(torch.autograd.Function):
    """precision: 2.01 x instead of 2 x: wrong in float64 too."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 2.01 * x


class CountingBack(torch.autograd.Function):
    """compiled: the backward keeps a Python counter; compiled and eager calls see it differ."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        STATE["calls"] += 1
        return g * 2 * x * STATE["calls"]


class SquareCancelFolded(torch.autograd.Function):
    """compiled: the eager backward rounds as SquareCancel's does, the compiled one computes 2 x
    exactly, as a compiler folding (x + c) - c would (TF's graph optimiser does): float32
    rounding of the op's own arithmetic, not a fault; float64 shows no difference."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        if torch.compiler.is_compiling():
            return g * 2 * x
        return g * ((x + 1e5) - 1e5) * 2


class SquareCancelCompiledWrong(torch.autograd.Function):
    """compiled: rounds as SquareCancel does and, only when compiled, returns 2.02 x for 2 x:
    wrong in float64 too, so still a failure."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        k = 2.02 if torch.compiler.is_compiling() else 2.0
        return g * ((x + 1e5) - 1e5) * k


class CountingVmap(torch.autograd.Function):
    """vmap: rounds as SquareCancel does and keeps a Python counter in the backward: vmap's one
    batched call sees another count than each sample's own call, in float64 too."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        STATE["vmap_calls"] = STATE.get("vmap_calls", 0) + 1
        return g * ((x + 1e5) - 1e5) * (2 + 0.01 * STATE["vmap_calls"])


class AccumulatingBack(torch.autograd.Function):
    """Checkpointing that keeps the input itself: the backward recomputes x * x from it and lets
    a nested torch.autograd.backward write x's gradient, 2 x g, into x.grad, returning None.
    Training (loss.backward(), then x.grad) gets 2 x g; torch.autograd.grad(loss, x) gets None.
    Each check compares what training gets."""
    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x * x

    @staticmethod
    def backward(ctx, g):
        x = ctx.x
        with torch.enable_grad():
            y = x * x
        torch.autograd.backward(y, g)
        return None


class AccumulatingCounting(torch.autograd.Function):
    """compiled, noncontiguous_upstream: gives x its gradient as AccumulatingBack does, with a
    Python counter in it as CountingBack has: each call writes another gradient into x.grad,
    which a check sees only where it reads x.grad (autograd.grad: None and None, a pass)."""
    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x * x

    @staticmethod
    def backward(ctx, g):
        x = ctx.x
        STATE["accumulated"] = STATE.get("accumulated", 0) + 1
        with torch.enable_grad():
            y = x * x * STATE["accumulated"]
        torch.autograd.backward(y, g)
        return None


class AccumulatingDifferentiable(torch.autograd.Function):
    """double_backward: AccumulatingBack whose nested backward keeps its graph when asked
    (create_graph under a differentiated backward): x.grad = 2 x g, itself differentiable, as a
    gradient penalty needs. Its second derivative is 2 (times the upstream and direction)."""
    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x * x

    @staticmethod
    def backward(ctx, g):
        x = ctx.x
        with torch.enable_grad():
            y = x * x
        torch.autograd.backward(y, g, create_graph=torch.is_grad_enabled())
        return None
