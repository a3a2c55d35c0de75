"""An autograd.Function whose forward returns a dict (issue 26, minor): autograd tracks only the
tensors a Function returns directly or in a tuple, so the dict's are cut from backward. That
read GV105 "gives None" for every input; it is an error at the forward saying why."""

from gradviz.model import RunRequest, RunSettings

OPS = """\
    import torch


    class DictOut(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return {"y": x * 2}

        @staticmethod
        def backward(ctx, g):
            return g * 2


    class TupleOut(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g, h):
            return g * 2 + h * 3
"""


def test_a_function_returning_a_dict_is_an_error_at_its_forward(engine, write_module):
    path = write_module("dict_out.py", OPS)
    bad, good = engine.run(
        [RunRequest(path, q, "torch", RunSettings()) for q in ("DictOut", "TupleOut")]
    )
    assert bad.status == "error" and bad.error.type == "OpOutputError"
    assert "DictOut.forward returned a dict" in bad.error.message
    assert "return a tuple" in bad.error.message
    assert bad.error.where == f"{path}:6"
    assert good.status == "ok"  # a tuple is what a Function returns
