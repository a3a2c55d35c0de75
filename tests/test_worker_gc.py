"""A worker freezes the framework's import-time objects (engine/child.py), so a full collection
no longer walks them; what the user's code makes later is still collected."""

import pytest

from gradviz.model import RunRequest, RunSettings

TORCH_OP = """
import gc
import weakref

import torch

import gradviz


class _Node:
    pass


@gradviz.op(name="gc_probe")
class GcProbe(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # a cycle only the collector frees
        alive = weakref.ref(a)
        del a, b
        gc.collect()
        print(f"frozen={gc.get_freeze_count()} enabled={gc.isenabled()} cycle_left={alive() is not None}")
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2
"""

TF_OP = """
import gc
import weakref

import tensorflow as tf

import gradviz


class _Node:
    pass


@gradviz.op(name="gc_probe")
@tf.custom_gradient
def gc_probe(x):
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    alive = weakref.ref(a)
    del a, b
    gc.collect()
    print(f"frozen={gc.get_freeze_count()} enabled={gc.isenabled()} cycle_left={alive() is not None}")

    def grad(g):
        return g * 2

    return x * 2, grad
"""


@pytest.mark.parametrize(
    ("fw", "qualname", "source"), [("torch", "GcProbe", TORCH_OP), ("tf", "gc_probe", TF_OP)]
)
def test_import_time_objects_are_frozen_and_new_garbage_is_collected(
    engine, write_module, fw, qualname, source
):
    path = write_module(f"gc_probe_{fw}.py", source)
    res = engine.run_one(
        RunRequest(path, qualname, fw, RunSettings(shape=(4,), modes=("custom",), timeout=120))
    )
    assert res.status == "ok", res.error
    line = next(ln for ln in res.log.splitlines() if ln.startswith("frozen="))
    fields = dict(kv.split("=") for kv in line.split())
    # torch alone leaves ~170k objects after its import, TensorFlow ~390k
    assert int(fields["frozen"]) > 50_000
    assert fields["enabled"] == "True"
    assert fields["cycle_left"] == "False"
    by_name = {t.name: t for t in res.tensors}
    upstream = by_name["out"].grads["custom"]
    assert by_name["x"].grads["custom"].tolist() == (2 * upstream).tolist()
