"""torch twin of test_tf_output_alias: an output that is an input tensor itself gets the loss's
gradient through that output (1), not the input's whole gradient (1 + 3)."""
import numpy as np
from op_runs import run, verdicts

from gradviz.model import RunSettings

ALIAS = """
import torch


class PassThrough(torch.nn.Module):
    def forward(self, x):
        return x, x * 3.0


class PassesX(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x), 2.0 * x

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 + 2 * g2
"""


def test_an_input_returned_as_it_is_gets_the_gradient_of_its_output(engine, write_module):
    path = write_module("alias_ops.py", ALIAS)
    for qualname, factor in (("PassThrough", 3.0), ("PassesX", 2.0)):
        res = run(engine, path, qualname, "torch", RunSettings(shape=(3, 4)))
        assert verdicts(res) == {"x": "match", "out": "match", "out1": "match"}, qualname
        out, x = res.tensor("out"), res.tensor("x")
        for mode in ("custom", "default"):
            np.testing.assert_array_equal(out.grads[mode], np.ones((3, 4)))
            np.testing.assert_array_equal(x.grads[mode], np.full((3, 4), 1.0 + factor))
