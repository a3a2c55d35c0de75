"""An integer input drawn past the end of the table it indexes (ranges include both ends): GV109
says so and how to give the range; with the range fixed the op runs (real workers)."""

import pytest
from op_runs import run

from gradviz.app.analysis import analyze
from gradviz.model import RunRequest, RunSettings

EMB = {
    "torch": (
        """
import torch

import gradviz


@gradviz.op(inputs={{"ids": {{"shape": (50,), "dtype": "int64", "range": (0, {hi})}}}})
class Lookup(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(10, 3)

    def forward(self, ids):
        return self.table(ids)
""",
        "Lookup",
    ),
    "tf": (
        """
import keras

import gradviz


@gradviz.op(inputs={{"ids": {{"shape": (50,), "dtype": "int64", "range": (0, {hi})}}}})
class Lookup(keras.layers.Layer):
    def build(self, input_shape):
        self.table = keras.layers.Embedding(10, 3)

    def call(self, ids):
        return self.table(ids)
""",
        "Lookup",
    ),
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_an_index_past_the_table_says_ranges_include_both_ends(engine, write_module, fw):
    src, qualname = EMB[fw]
    path = write_module(f"lookup_{fw}.py", src.format(hi=10))
    [res] = engine.run([RunRequest(path, qualname, fw, RunSettings())])
    codes = {f.code: f for f in analyze(res).findings}
    assert "GV109-input-range" in codes, (res.status, res.error, res.mode_errors, list(codes))
    assert "both ends included" in codes["GV109-input-range"].message
    path = write_module(f"lookup_{fw}.py", src.format(hi=9))
    ok = run(engine, path, qualname, fw)
    assert "GV109-input-range" not in {f.code for f in analyze(ok).findings}
