"""Straight-through built into the forward with .detach() (no backward of its own): custom and
default are the same gradient, numeric tells what it is: GV302 for x + (round(x) - x).detach(),
GV301 for a detach that halves a square's gradient (real torch worker)."""

from op_runs import run, verdicts

from gradviz.app.analysis import analyze

OPS = """
import torch

import gradviz


@gradviz.op(name="detach_ste")
class DetachSTE(torch.nn.Module):
    def forward(self, x):
        return x + (torch.round(x) - x).detach()


@gradviz.op(name="half_square")
class HalfSquare(torch.nn.Module):
    def forward(self, x):
        return x * x.detach()          # autodiff sees x * const: half the true gradient
"""


def _finding(res):
    [f] = [f for f in analyze(res).findings if f.code.startswith(("GV301", "GV302"))]
    return f


def test_detach_tricks_are_named_from_numeric(engine, write_module):
    path = write_module("detach_ops.py", OPS)
    ste = run(engine, path, "DetachSTE", "torch")
    assert verdicts(ste)["x"] == "surrogate"  # custom = default = 1 where numeric is 0
    f = _finding(ste)
    assert f.code == "GV302-grad-surrogate" and "straight-through" in f.message
    assert "the default gives the same gradient" in f.message
    half = run(engine, path, "HalfSquare", "torch")
    f = _finding(half)
    assert f.code == "GV301-grad-wrong" and "0.5 times the true gradient" in f.message
