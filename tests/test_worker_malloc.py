"""engine.memory.keep_freed_memory: a worker's glibc malloc serves buffers up to 32 MiB from its
heap and keeps a freed heap top, instead of a mapping per buffer handed back to the kernel at
free (and faulted in again page by page by the next one). Read in a fresh interpreter through
glibc's own accounting (mallinfo2: hblks, the buffers that have mappings of their own; keepcost,
the free heap top kept)."""

import json
import subprocess
import sys
import textwrap

import pytest

# glibc's accounting, in the process that runs it: malloc a 10^6-element float64 buffer and then
# some, and say whether it got a mapping of its own, and how much free heap top is kept after
MALLINFO = """
import ctypes


class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]


libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]


def malloc_20mib():
    before = libc.mallinfo2().hblks
    p = libc.malloc(20 << 20)
    mapped = libc.mallinfo2().hblks - before
    libc.free(p)
    return {"mapped": mapped, "kept_top": libc.mallinfo2().keepcost}
"""

PROBE = MALLINFO + textwrap.dedent(
    """
        import json, sys

        if sys.argv[1] == "kept":
            from gradviz.engine.memory import keep_freed_memory

            keep_freed_memory(int(sys.argv[2]))
        print(json.dumps(malloc_20mib()))
        """
)


def _probe(*args: str) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def glibc():
    if not sys.platform.startswith("linux") or "glibc" not in " ".join(
        __import__("platform").libc_ver()
    ):
        pytest.skip("glibc's malloc only")


def test_a_worker_keeps_freed_buffers_for_the_next_run(glibc):
    plain = _probe("plain")
    assert plain["mapped"] == 1 and plain["kept_top"] < 1 << 20  # its own mapping, unmapped
    kept = _probe("kept", "0")
    assert kept["mapped"] == 0  # from the heap
    assert kept["kept_top"] >= 20 << 20  # and kept there once freed


def test_what_is_kept_is_bounded_by_the_memory_limit(glibc):
    # a 256 MiB limit keeps at most 16 MiB of free heap top: the 20 MiB buffer goes back
    kept = _probe("kept", str(256 << 20))
    assert kept["mapped"] == 0
    assert kept["kept_top"] < 16 << 20


WORKER_OP = (
    MALLINFO
    + """
import torch

import gradviz


@gradviz.op(name="malloc_probe")
class MallocProbe(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        print(f"mapped={malloc_20mib()['mapped']}")
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2
"""
)


def test_the_torch_worker_runs_ops_with_it(glibc, engine, write_module):
    from gradviz.model import RunRequest, RunSettings

    path = write_module("malloc_probe.py", WORKER_OP)
    res = engine.run_one(
        RunRequest(path, "MallocProbe", "torch", RunSettings(shape=(4,), modes=("custom",)))
    )
    assert res.status == "ok", res.error
    assert "mapped=0" in res.log.splitlines()
