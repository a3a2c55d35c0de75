"""torch.library.custom_op with register_autograd is an op: custom calls the op (its registered
backward), default differentiates its Python body (real torch worker)."""

import uuid

import numpy as np
from op_runs import run, verdicts

from gradviz.model import RunSettings

OPS = """
import torch


@torch.library.custom_op("{ns}::scaled_sin", mutates_args=())
def scaled_sin(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _backward(ctx, g):
    (x,) = ctx.saved_tensors
    return g * torch.cos(x) * {factor}


scaled_sin.register_autograd(_backward, setup_context=_setup)


@torch.library.custom_op("{ns}::no_autograd", mutates_args=())
def no_autograd(x: torch.Tensor) -> torch.Tensor:
    return x * 2
"""
BOTH = RunSettings(modes=("custom", "default"))


def test_a_custom_op_is_found_and_its_default_is_its_body(engine, write_module):
    ns = f"gv{uuid.uuid4().hex[:8]}"
    path = write_module("lib_ops.py", OPS.format(ns=ns, factor="2.0"))
    [cat] = [c for c in engine.load([path]) if c.framework == "torch"]
    assert {(op.qualname, op.kind, op.line) for op in cat.ops} == {("scaled_sin", "custom_op", 6)}
    res = run(engine, path, "scaled_sin", "torch", BOTH)
    x = res.tensor("x")
    cos = np.cos(x.value.astype(np.float64))
    np.testing.assert_allclose(x.grads["custom"], 2 * cos, rtol=1e-5)
    np.testing.assert_allclose(x.grads["default"], cos, rtol=1e-5)
    assert verdicts(res)["x"] == "differs"
    # the file fixed and reloaded in the warm worker (the op registered again)
    path = write_module("lib_ops.py", OPS.format(ns=ns, factor="1.0"))
    assert verdicts(run(engine, path, "scaled_sin", "torch", BOTH))["x"] == "match"


FAKE = """

@scaled_sin.register_fake
def _fake(x):
    return torch.empty_like(x)
"""


def test_contract_checks_of_a_custom_op_give_custom_op_advice(engine, write_module):
    ns = f"gv{uuid.uuid4().hex[:8]}"
    checks = RunSettings(modes=("custom",), checks=("vmap", "compiled"))
    path = write_module("lib_ops.py", OPS.format(ns=ns, factor="1.0"))
    got = {c.name: c for c in run(engine, path, "scaled_sin", "torch", checks).checks}
    # torch.func not transforming a custom op's registered autograd is no fault of the op: skip
    assert got["vmap"].status == "skip" and "setup_context and a vmap rule" in got["vmap"].fix
    assert "does not transform a custom op's registered autograd" in got["vmap"].message
    assert got["compiled"].status == "fail" and "register_fake" in got["compiled"].fix
    path = write_module("lib_ops.py", OPS.format(ns=ns, factor="1.0") + FAKE)
    got = {c.name: c for c in run(engine, path, "scaled_sin", "torch", checks).checks}
    assert got["compiled"].status == "pass"
