"""A forward whose output stays below float64 whatever its inputs (a `.float()` inside, a Keras
dtype policy: tests/test_tf_layer_state.py) has no numeric reference when its finite differences
are rounding noise, and keeps it when they are not (a sign whose ±1 is exact)."""

import numpy as np

from tests.op_runs import run, verdicts

LOW = """
import torch


class SmoothFloat32(torch.nn.Module):
    def forward(self, x):
        return x.float() * 3.0


class SignFloat32(torch.nn.Module):
    def forward(self, x):
        return torch.sign(x.float())
"""


def test_smooth_float32_output_has_no_numeric_reference(engine, write_module):
    path = write_module("low_ops.py", LOW)
    res = run(engine, path, "SmoothFloat32", "torch")
    err = res.mode_errors["numeric"]
    assert err.type == "NumericLowPrecision", err
    assert "float32 when its inputs are float64" in err.message
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], np.full(200, 3.0))
    assert "numeric" not in x.grads
    assert verdicts(res)["x"] == "match"


def test_piecewise_constant_float32_output_keeps_its_numeric_reference(engine, write_module):
    path = write_module("low_ops.py", LOW)
    res = run(engine, path, "SignFloat32", "torch")
    assert "numeric" not in res.mode_errors, res.mode_errors
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["numeric"], np.zeros(200))
    np.testing.assert_array_equal(x.grads["custom"], np.zeros(200))
    assert verdicts(res)["x"] == "match"
