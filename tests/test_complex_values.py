"""Complex values get a clear message (issue 26, minor): explicit complex inputs silently lost
their imaginary part, and a complex output read "integer or bool output"."""

import pytest

from gradviz.model import RunRequest, RunSettings

COMPLEX_IN = """
import numpy as np
import torch
import gradviz

@gradviz.op(inputs={"x": np.array([1 + 2j, 3 - 1j])})
class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        return 2 * g
"""

COMPLEX_OUT = """
import torch

class ToComplex(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.complex(x, 2 * x)

    @staticmethod
    def backward(ctx, g):
        return g.real + 2 * g.imag
"""


@pytest.mark.parametrize(
    "source, said",
    [
        (COMPLEX_IN, "inputs['x']: complex values; gradviz feeds real tensors only"),
        (COMPLEX_OUT, "output 0 of the op is complex (torch.complex64); gradviz compares real"),
    ],
)
def test_complex_values_are_named(engine, write_module, source, said):
    path = write_module("cplx.py", source)
    name = "Twice" if source is COMPLEX_IN else "ToComplex"
    res = engine.run_one(RunRequest(path, name, "torch", RunSettings(modes=("custom",))))
    assert res.status == "error"
    assert said in res.error.message, res.error.message
