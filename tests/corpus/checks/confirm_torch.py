"""Each failure of tests/test_checks_torch.py confirmed by torch's own tool, in a process of its
own (the test process must not import torch: tests/test_gui.py checks that). Prints one JSON
object: what -> "ok" or "ExceptionType: message"."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_ops as ops  # noqa: E402


def outcome(fn) -> str:
    try:
        fn()
        return "ok"
    except Exception as exc:  # noqa: BLE001 - the outcome is the point
        return f"{type(exc).__name__}: {exc}"


def once_backward():
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    up = torch.randn(5, dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(ops.CubeOnce.apply(x), x, up, create_graph=True)
    g.sum().backward()


def view_back(contiguous):
    x = torch.randn(4, 50, requires_grad=True)
    up = torch.randn(50, 4).t()                # what a transpose hands back
    torch.autograd.grad(ops.ViewBack.apply(x), x, up.contiguous() if contiguous else up)


def vmap_of(fn):
    xs = torch.randn(3, 4)
    torch.func.vmap(torch.func.grad(lambda x: fn.apply(x).sum()))(xs)


def autocast_linear():
    x, w = torch.randn(4, 8, requires_grad=True), torch.randn(8, 3, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = ops.LinearMixed.apply(x, w)
    out.sum().backward()


def inplace_expanded():
    x = torch.randn(200, requires_grad=True)
    torch.autograd.grad(ops.InplaceBack.apply(x), x, torch.ones(1).expand(200))


x64 = torch.randn(5, dtype=torch.float64, requires_grad=True)
print(json.dumps({
    "gradgradcheck CubeOnce": outcome(
        lambda: torch.autograd.gradgradcheck(ops.CubeOnce.apply, (x64,))),
    "double backward CubeOnce": outcome(once_backward),
    "gradgradcheck CubeDetached": outcome(
        lambda: torch.autograd.gradgradcheck(ops.CubeDetached.apply, (x64,))),
    "gradgradcheck Cube": outcome(lambda: torch.autograd.gradgradcheck(ops.Cube.apply, (x64,))),
    "transposed upstream ViewBack": outcome(lambda: view_back(False)),
    "contiguous upstream ViewBack": outcome(lambda: view_back(True)),
    "expanded upstream InplaceBack": outcome(inplace_expanded),
    "vmap OldStyle": outcome(lambda: vmap_of(ops.OldStyle)),
    "vmap NoVmapRule": outcome(lambda: vmap_of(ops.NoVmapRule)),
    "autocast LinearMixed": outcome(autocast_linear),
}))
