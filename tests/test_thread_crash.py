"""A crash from a thread one op started, while another op runs (issue 26, minor): it was blamed
on the op running then. The error says a thread of the user's crashed, and points at its line."""

from gradviz.model import RunRequest, RunSettings

OPS = """\
    import ctypes
    import threading
    import time

    import torch

    START = threading.Event()


    def _later():
        START.wait()
        ctypes.string_at(0)   # the thread's crash


    class StartsAThread(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            threading.Thread(target=_later, daemon=True).start()
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2


    class Innocent(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            START.set()         # the other op's thread crashes the worker now
            time.sleep(30)
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3
"""


def test_a_crash_in_a_thread_of_another_op_names_the_thread(engine, write_module):
    path = write_module("thread_ops.py", OPS)
    first, second = engine.run(
        [
            RunRequest(path, q, "torch", RunSettings(modes=("custom",)))
            for q in ("StartsAThread", "Innocent")
        ]
    )
    assert first.status == "ok"
    err = second.error
    assert second.status == "error" and err.kind == "crashed", err
    assert "in a thread that user code started" in err.message and "SIGSEGV" in err.message
    assert err.where == f"{path}:12"
    assert "in _later" in err.traceback
    # the worker was replaced and runs the next op
    [again] = engine.run(
        [RunRequest(path, "StartsAThread", "torch", RunSettings(modes=("custom",)))]
    )
    assert again.status == "ok"
