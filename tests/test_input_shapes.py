"""An op that cannot take the inputs gradviz made (a conv on a flat vector): GV107 says the shape
was gradviz's choice and how to give another; with the shapes given, it runs (real workers)."""

import pytest
from op_runs import run, verdicts

from gradviz.app.analysis import analyze
from gradviz.model import RunRequest, RunSettings

CONV = {
    "torch": (
        """
import torch

import gradviz


class Conv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(x)

{given}
""",
        "Conv",
        13,
    ),
    "tf": (
        """
import tensorflow as tf

import gradviz


@tf.custom_gradient
def proj(x):
    w = tf.ones([3, 2], x.dtype)
    def grad(g):
        return tf.matmul(g, w, transpose_b=True)
    return tf.matmul(x, w), grad

{given}
""",
        "proj",
        12,
    ),
}
GIVEN = {
    "torch": 'gradviz.op(inputs={"x": (1, 3, 8, 8)})(Conv)',
    "tf": 'gradviz.op(inputs={"x": (4, 3)})(proj)',
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_an_op_that_needs_other_input_shapes_says_how_to_give_them(engine, write_module, fw):
    src, qualname, line = CONV[fw]
    path = write_module(f"conv_{fw}.py", src.format(given=""))
    [res] = engine.run([RunRequest(path, qualname, fw, RunSettings())])
    assert res.status == "error"
    [f] = [f for f in analyze(res).findings if f.code == "GV107-input-shape"]
    assert f.severity == "error" and f.where == f"{path}:{line}"
    assert "shape (200,)" in f.message and "@gradviz.op(inputs=" in f.fix
    path = write_module(f"conv_{fw}.py", src.format(given=GIVEN[fw]))
    ok = run(engine, path, qualname, fw)
    assert all(v == "match" for v in verdicts(ok).values())
    assert not [f for f in analyze(ok).findings if f.code == "GV107-input-shape"]
