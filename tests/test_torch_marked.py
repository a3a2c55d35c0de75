"""torch twin of test_tf_marked: a plain function marked with gradviz.op in a torch-only file is
named in the skipped notes with why (it was left out in silence); the file's real op still runs."""

MARKED = """
import torch

import gradviz


@gradviz.op(name="ste_fn")
def ste_fn(x):
    return x + (torch.round(x) - x).detach()


@gradviz.op
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2
"""


def test_a_marked_plain_function_is_a_skipped_note_with_why(engine, write_module):
    path = write_module("marked_torch.py", MARKED)
    [cat] = [c for c in engine.load([path]) if c.framework == "torch"]
    assert [op.qualname for op in cat.ops] == ["Double"]
    notes = {note.split(":", 1)[0]: note for note in cat.skipped}
    assert "plain function is not an op" in notes["ste_fn"] and "Module" in notes["ste_fn"]
