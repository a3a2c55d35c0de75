"""Output that never ends costs bounded memory and no disk (issue 26, item 4): a worker writing
without newlines grew the parent (the GUI process in the app) without limit, since each line was
read whole, and a user call's captured output went to a temp file that grew on disk (3 GiB seen).
Both keep their head and tail and say how much was left out."""

import os
import threading

from gradviz.engine.worker_output import LINE_HEAD, LINE_TAIL, WorkerOutput
from gradviz.model import RunRequest, RunSettings


def test_a_worker_line_without_end_is_cut_to_its_head_and_tail():
    r, w = os.pipe()
    out = WorkerOutput("torch")
    total = 24 << 20  # 24 MiB on one line

    def write():
        with os.fdopen(w, "wb") as f:
            f.write(b"HEAD")
            for _ in range(total // (1 << 20) - 1):
                f.write(b"x" * (1 << 20))
            f.write(b"x" * ((1 << 20) - 8) + b"TAIL\nend\n")

    writer = threading.Thread(target=write)
    writer.start()
    out.follow(os.fdopen(r, "rb")).join()  # until the pipe's end
    writer.join()
    first, last = out.lines
    assert last == "end"
    assert first.startswith("HEADxxx") and first.endswith("xxxTAIL")
    dropped = total - LINE_HEAD - LINE_TAIL
    assert f" [... {dropped} bytes of this line left out ...] " in first
    assert len(first) == LINE_HEAD + LINE_TAIL + len(
        f" [... {dropped} bytes of this line left out ...] "
    )


FLOOD = """
import os, stat
import torch

class Flood(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        kind = b"file" if stat.S_ISREG(os.fstat(1).st_mode) else b"notfile"
        os.write(1, b"KIND=" + kind + b";")
        chunk = b"y" * (1 << 20)
        for _ in range(32):
            os.write(1, chunk)
        os.write(2, b";END")
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2
"""


def test_captured_output_keeps_head_and_tail_and_never_goes_to_a_file(engine, write_module):
    from gradviz.backends.capture_pipe import LOG_HEAD, LOG_TAIL

    path = write_module("flood.py", FLOOD)
    res = engine.run_one(RunRequest(path, "Flood", "torch", RunSettings(modes=("custom",))))
    assert res.status == "ok", res.error
    head = "KIND=notfile;"  # the call's stdout is no file on disk
    total = len(head) + (32 << 20) + len(";END")
    assert res.log.startswith(head + "yyy") and res.log.endswith("yyy;END")
    said = f"\n[... {total - LOG_HEAD - LOG_TAIL} bytes of output left out ...]\n"
    assert said in res.log
    assert len(res.log) == LOG_HEAD + LOG_TAIL + len(said)
    again = engine.run_one(RunRequest(path, "Flood", "torch", RunSettings(modes=("custom",))))
    assert again.log == res.log  # the next capture starts afresh
