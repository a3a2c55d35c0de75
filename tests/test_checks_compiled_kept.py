"""torch's `compiled` check keeps an op's compiled call between runs of a worker
(backends/checks/torch_compile_kept.py): a re-run of an unchanged Function compiles nothing new
and still finds what a fresh compile finds; a changed file is compiled afresh; a Module, or a
constant whose repr may not say its value, is never kept. The test process never imports torch."""

from types import SimpleNamespace

from gradviz.backends.checks import torch_compile_kept as K
from gradviz.backends.graphs import ArgPlan
from gradviz.model import RunRequest, RunSettings

# run from Square's own file: another file of its folder would have the worker load Square's
# module afresh (and a new module's op is compiled afresh)
PROBE = """
from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list

from gradviz.backends.checks import torch_compile_kept as K


@gradviz.op(name="kept_compiles")
class KeptCompiles(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        for (file, qualname, _), kept in K._kept.items():
            if file != __file__:  # another test's op of the same name
                continue
            code = kept.fn._torchdynamo_orig_callable.__code__
            print(f"kept={qualname}:{id(kept.fn)}:{len(_debug_get_cache_entry_list(code))}")
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2
"""

RIGHT = """
import torch

import gradviz


@gradviz.op(name="square")
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x
"""

# the same op keeping a Python counter in its backward: compiled and eager calls see it differ
COUNTING = RIGHT.replace("import gradviz\n", 'import gradviz\n\nSTATE = {"calls": 0}\n').replace(
    "        return g * 2 * x",
    '        STATE["calls"] += 1\n        return g * 2 * x * STATE["calls"]',
)


def _kept(engine, path: str) -> list[str]:
    """What the worker keeps for Square: the compiled call's id and Dynamo's compiled entries on
    its code, one line per kept call."""
    res = engine.run_one(
        RunRequest(path, "KeptCompiles", "torch", RunSettings(shape=(3,), modes=("custom",)))
    )
    assert res.status == "ok", res.error
    return [ln for ln in res.log.splitlines() if ln.startswith("kept=Square:")]


def _compiled(engine, path: str):
    (res,) = engine.run([RunRequest(path, "Square", "torch", RunSettings(checks=("compiled",)))])
    assert res.status == "ok", res.error
    (check,) = res.checks
    return check


def test_a_rerun_compiles_nothing_new_and_still_passes(engine, write_module):
    path = write_module("square_ok.py", RIGHT + PROBE)
    first = _compiled(engine, path)
    after_first = _kept(engine, path)
    second = _compiled(engine, path)
    third = _compiled(engine, path)
    assert first.status == second.status == third.status == "pass"
    assert first.message == second.message == third.message
    assert "aot_eager" in first.message
    # one kept call, compiled once (float32; its float64 witness is not needed for a pass), and
    # the same one, with still one compiled entry, after two re-runs
    assert len(after_first) == 1 and after_first[0].endswith(":1"), after_first
    assert _kept(engine, path) == after_first


def test_a_side_effect_is_caught_on_every_rerun_and_a_changed_file_is_compiled_afresh(
    engine, write_module
):
    path = write_module("square_changes.py", COUNTING)
    for _ in range(3):
        check = _compiled(engine, path)
        assert check.status == "fail" and check.kind == "differs", check
    with open(path, "w") as fh:  # the same op name and file, now right: nothing kept applies
        fh.write(RIGHT)
    assert _compiled(engine, path).status == "pass"
    with open(path, "w") as fh:
        fh.write(COUNTING)
    assert _compiled(engine, path).status == "fail"


def _ctx(kind="function", plans=(), obj=None):
    return SimpleNamespace(
        info=SimpleNamespace(kind=kind, file="/ops.py", qualname="Op"),
        plans=list(plans),
        obj=obj if obj is not None else object(),
        device="cpu",
    )


def test_what_a_kept_compile_is_keyed_on():
    obj = object()
    x = ArgPlan("x", "tensor")
    key = K.key_of(_ctx(plans=[x], obj=obj), "float32", (("x", (200,)),))
    assert key == K.key_of(_ctx(plans=[x], obj=obj), "float32", (("x", (200,)),))
    assert key != K.key_of(_ctx(plans=[x], obj=obj), "float64", (("x", (200,)),))
    assert key != K.key_of(_ctx(plans=[x], obj=obj), "float32", (("x", (100,)),))
    assert key != K.key_of(_ctx(plans=[x]), "float32", (("x", (200,)),))  # another object
    # 1, 1.0 and True are equal in Python but not to a trace
    consts = {
        K.key_of(_ctx(plans=[x, ArgPlan("k", "const", const=c)], obj=obj), "float32", ())
        for c in (1, 1.0, True)
    }
    assert len(consts) == 3 and None not in consts
    assert K.key_of(_ctx(kind="module", plans=[x]), "float32", ()) is None
    assert K.key_of(_ctx(kind="layer", plans=[x]), "float32", ()) is None
    odd = ArgPlan("k", "const", const=object())  # its repr names an address, not a value
    assert K.key_of(_ctx(plans=[x, odd]), "float32", ()) is None


def test_each_kept_call_has_a_code_object_of_its_own():
    def run(*a):
        return a

    one, two = K.own_code(run), K.own_code(run)
    assert one.__code__ is not two.__code__ is not run.__code__
    assert one(1, 2) == two(1, 2) == (1, 2)


TF_RIGHT = """
import tensorflow as tf

import gradviz


@gradviz.op(name="square")
@tf.custom_gradient
def square(x):
    def grad(g):
        return g * 2 * x

    return x * x, grad


@gradviz.op(name="kept_traces")
@tf.custom_gradient
def kept_traces(x):
    from gradviz.backends.checks import compiled, vmap

    for label, store in (("kept", compiled._TF_KEPT), ("vmap", vmap._TF_KEPT)):
        for (file, qualname, _), (_, graph_fn, *_) in store.items():
            if file != __file__:  # another test's op of the same name
                continue
            count = graph_fn.experimental_get_tracing_count()
            print(f"{label}={qualname}:{id(graph_fn)}:{count}")

    def grad(g):
        return g * 2

    return x * 2, grad
"""

# a Python counter in the gradient: a trace freezes it, eager calls move it
TF_COUNTING = TF_RIGHT.replace(
    "import gradviz\n", 'import gradviz\n\nSTATE = {"calls": 0}\n', 1
).replace(
    "        return g * 2 * x\n",
    '        STATE["calls"] += 1\n        return g * 2 * x * STATE["calls"]\n',
    1,
)


def _tf_compiled(engine, path: str, check: str = "compiled"):
    (res,) = engine.run([RunRequest(path, "square", "tf", RunSettings(checks=(check,)))])
    assert res.status == "ok", res.error
    (check,) = res.checks
    return check


def _tf_kept(engine, path: str, label: str = "kept") -> list[str]:
    res = engine.run_one(
        RunRequest(path, "kept_traces", "tf", RunSettings(shape=(3,), modes=("custom",)))
    )
    assert res.status == "ok", res.error
    return [ln for ln in res.log.splitlines() if ln.startswith(f"{label}=square:")]


def test_tf_a_rerun_traces_nothing_new_and_a_side_effect_is_still_caught(engine, write_module):
    path = write_module("tf_square_ok.py", TF_RIGHT)
    first = _tf_compiled(engine, path)
    after_first = _tf_kept(engine, path)
    again = [_tf_compiled(engine, path) for _ in range(2)]
    assert [c.status for c in [first, *again]] == ["pass"] * 3
    assert len(after_first) == 1 and after_first[0].endswith(":1"), after_first
    assert _tf_kept(engine, path) == after_first  # one trace served both re-runs
    with open(path, "w") as fh:  # the same op, now keeping a counter: nothing kept applies
        fh.write(TF_COUNTING)
    for _ in range(2):
        check = _tf_compiled(engine, path)
        assert check.status == "fail" and check.kind == "differs", check


def test_tf_vmap_keeps_its_batched_trace_between_runs(engine, write_module):
    """tf.vectorized_map in eager converts the gradient anew each call: the check keeps its
    batched tf.function (backends/checks/vmap.py) and a re-run traces nothing new."""
    path = write_module("tf_square_vmap.py", TF_RIGHT)
    first = _tf_compiled(engine, path, "vmap")
    after_first = _tf_kept(engine, path, "vmap")
    again = _tf_compiled(engine, path, "vmap")
    assert first.status == again.status == "pass" and first.message == again.message
    assert "each sample's own gradient" in first.message
    assert len(after_first) == 1 and after_first[0].endswith(":1"), after_first
    assert _tf_kept(engine, path, "vmap") == after_first
