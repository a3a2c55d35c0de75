"""Hand-made RunResults (numpy only) for the tests of the plots, the grid and the exports:
a straight-through rounding op in both frameworks, with an optional spike and NaNs, any size."""

from __future__ import annotations

import numpy as np

from gradviz.model import (
    NumericInfo,
    OpInfo,
    RunRequest,
    RunResult,
    RunSettings,
    TensorResult,
)


def ste_result(
    framework: str = "torch",
    n: int = 200,
    shape: tuple | None = None,
    seed: int = 0,
    spike_at: int | None = None,
    spike: float = 50.0,
    nan_at: tuple = (),
    numeric: bool = True,
    op: str = "round_ste",
) -> RunResult:
    """x -> round(x) with a straight-through custom backward; loss = sum(out).

    default grad of x: zeros (round has zero derivative); custom: ones (+ the spike, NaNs);
    numeric: zeros except near .5 boundaries (here: zeros). out: ones in every mode.
    """
    shape = tuple(shape) if shape else (n,)
    size = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size).astype(np.float32)
    custom = np.ones(size, np.float32) + rng.normal(0, 0.05, size).astype(np.float32)
    if spike_at is not None:
        custom[spike_at] = spike
    for i in nan_at:
        custom[i] = np.nan
    grads_x = {"default": np.zeros(size, np.float32), "custom": custom}
    grads_out = {"default": np.ones(size, np.float32), "custom": np.ones(size, np.float32)}
    info = None
    if numeric:
        grads_x["numeric"] = np.zeros(size, np.float64)
        grads_out["numeric"] = np.ones(size, np.float64)
        info = NumericInfo("full", eps=1e-3)
    t_x = TensorResult(
        "x",
        "input",
        shape,
        "float32",
        x.reshape(shape),
        {k: v.reshape(shape) for k, v in grads_x.items()},
        numeric=info,
    )
    t_out = TensorResult(
        "out",
        "output",
        shape,
        "float32",
        np.round(x).reshape(shape),
        {k: v.reshape(shape) for k, v in grads_out.items()},
        numeric=info,
    )
    settings = RunSettings(
        shape=shape, modes=("default", "custom", "numeric") if numeric else ("default", "custom")
    )
    req = RunRequest("/examples/ste.py", "RoundSTE", framework, settings)
    opinfo = OpInfo(op, framework, "function", "RoundSTE", "/examples/ste.py", 10, ("x",))
    return RunResult(
        req,
        opinfo,
        device="cpu",
        tensors=(t_x, t_out),
        framework_version="2.13" if framework == "torch" else "2.21",
    )


def broken_tf_result(n: int = 200, op: str = "round_ste") -> RunResult:
    """The tf side of a broken default path: no default gradient reaches x (TF None)."""
    r = ste_result("tf", n=n, op=op, numeric=False)
    tx, tout = r.tensors
    tx = TensorResult(
        "x",
        "input",
        tx.shape,
        tx.dtype,
        tx.value,
        {"custom": tx.grads["custom"]},
        absent={"default": "tf.round has no gradient (None)"},
    )
    return RunResult(r.request, r.op, device="cpu", tensors=(tx, tout), framework_version="2.21")


# The log-scale tests: an op whose custom gradient spans decades, and one zero (no log).
SVG_NS = "{http://www.w3.org/2000/svg}"
DECADES = [0.0, 0.01, 0.1, 1.0, 10.0, 100.0]  # the custom gradient of DECADES_SRC, upstream ones

DECADES_SRC = f"""
import torch

import gradviz


@gradviz.op(name="decades", inputs={{"x": (6,)}})
class Decades(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        return g * torch.tensor({DECADES}, dtype=g.dtype)
"""
