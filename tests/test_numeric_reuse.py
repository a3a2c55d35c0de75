"""What the numeric pass makes once instead of again (backends/numeric_calls.py, numeric.py
_distinct): the op's call at the unmoved point while its output is perturbed, and the dots of
modes whose gradients are the same bits. Reused only where a new call or dot gives the same
numbers; the numbers are the ones made anew."""

import numpy as np
import pytest
from fresh_process import in_fresh_process

from gradviz.backends.numeric import _distinct
from gradviz.backends.numeric_calls import UnmovedCalls
from gradviz.model import RunRequest, RunSettings

N = 600000  # projected: 16 directions, one perturbation per forward


class Box:
    """A tensor stand-in with a version counter, as torch's in-place ops bump it."""

    def __init__(self):
        self.version = 0


def test_a_call_is_reused_only_with_the_same_unchanged_tensors():
    made = []

    def call_op(args, kwargs):
        made.append(args)
        return [Box()]

    calls = UnmovedCalls(call_op, lambda t: t.version)
    x, w, k = Box(), Box(), 3
    first = calls.forward()((x, w), {"k": k})
    assert calls.forward()((x, w), {"k": k}) is first and len(made) == 1
    assert calls.forward()((x, Box()), {"k": k}) is not first  # another tensor: called
    assert len(made) == 2
    # that position got another tensor once: a moved one, so it is called from then on
    assert calls.forward()((x, w), {"k": k}) is not first and len(made) == 3


@pytest.mark.parametrize("change", ["input", "output", "kwarg"])
def test_a_changed_input_or_output_makes_the_call_again(change):
    made = []

    def call_op(args, kwargs):
        made.append(args)
        return [Box()]

    calls = UnmovedCalls(call_op, lambda t: t.version)
    x, w = Box(), Box()
    first = calls.forward()((x, w), {"k": 1.5})
    kwargs = {"k": 1.5}
    if change == "input":
        x.version += 1  # written in place since the first call
    elif change == "output":
        first[0].version += 1  # a later op wrote into the output
    else:
        kwargs = {"k": 2.5}
    assert calls.forward()((x, w), kwargs) is not first and len(made) == 2


def test_each_call_of_a_forward_is_matched_with_its_own():
    """A graph calling the op twice (op(op(x))): the second call gets the first's output."""

    def call_op(args, kwargs):
        return [Box()]

    calls = UnmovedCalls(call_op, lambda t: t.version)
    x = Box()
    fwd = calls.forward()
    a = fwd((x,), {})
    b = fwd((a[0],), {})
    again = calls.forward()
    assert again((x,), {}) is a and again((a[0],), {}) is b


def test_modes_with_the_same_bits_share_their_dots():
    g = np.linspace(-1, 1, 50, dtype=np.float32)
    zeros, minus_zeros = np.zeros(50, np.float32), -np.zeros(50, np.float32)
    flat, twins = _distinct({"default": g, "custom": g.copy(), "other": g * 2})
    assert set(flat) == {"default", "other"} and twins == {"custom": "default"}
    assert flat["default"].dtype == np.float64 and np.array_equal(flat["default"], g)
    # -0.0 is not 0.0 bit for bit, nor float64 the same as float32
    _, twins = _distinct({"default": zeros, "custom": minus_zeros, "x": g.astype(np.float64)})
    assert twins == {}


TORCH_OP = """
import torch
import gradviz

@gradviz.op(name="twice")
class Twice(torch.autograd.Function):
    calls = 0

    @staticmethod
    def forward(ctx, x):
        print("forward called")
        Twice.calls += 1
        # JITTER: a last bit that changes from call to call (the loss stays repeatable)
        return x * 2.0 + (Twice.calls % 2) * JITTER * x

    @staticmethod
    def backward(ctx, g):
        return g * 2.0
"""

TF_OP = """
import tensorflow as tf
import gradviz

calls = [0]

@gradviz.op(name="twice")
@tf.custom_gradient
def twice(x):
    print("forward called")
    calls[0] += 1
    y = x * 2.0 + (calls[0] % 2) * JITTER * x

    def grad(g):
        return g * 2.0

    return y, grad
"""


def _numeric_calls(engine, path, fw, qualname) -> int:
    counts = []
    for modes in (("default", "custom"), ("default", "custom", "numeric")):
        s = RunSettings(shape=(N,), modes=modes, timeout=300)
        [res] = engine.run([RunRequest(path, qualname, fw, s)])
        assert res.status == "ok" and not res.mode_errors, res.error or res.mode_errors
        counts.append(res.log.count("forward called"))
    return counts[1] - counts[0]


@pytest.mark.parametrize(
    "fw, qualname, source", [("torch", "Twice", TORCH_OP), ("tf", "twice", TF_OP)]
)
def test_the_ops_output_is_perturbed_with_one_call_of_the_op(
    engine, write_module, fw, qualname, source
):
    """Two forwards at the unmoved point, 32 for x (16 directions, two signs); the output's 32
    reuse its first call, where the op gives the same bits each time. An op whose last bit
    changes from call to call is called for each."""
    same = write_module(f"same_{fw}.py", source.replace("JITTER", "0.0"))
    assert _numeric_calls(engine, same, fw, qualname) == 2 + 32 + 1
    jitter = write_module(f"jitter_{fw}.py", source.replace("JITTER", "1e-15"))
    assert _numeric_calls(engine, jitter, fw, qualname) == 2 + 32 + 32


def test_reused_calls_and_dots_give_the_numbers_made_anew(examples_dir):
    """The tutorial's MulWeights at 600000 elements with the reuse and without: every projection
    the same bits."""
    code = f"""
        import numpy as np
        from gradviz.backends import load_backend, numeric, numeric_eval
        from gradviz.model import RunRequest, RunSettings
        req = RunRequest({str(examples_dir / "tutorial_torch.py")!r}, "MulWeights", "torch",
                         RunSettings(shape=({N},), modes=("default", "custom", "numeric"),
                                     timeout=600))
        backend = load_backend("torch")
        reused = backend.handle("run", req)

        class Anew(numeric_eval.UnmovedCalls):
            def forward(self):
                return self._call

        numeric_eval.UnmovedCalls = Anew
        distinct = numeric._distinct
        numeric._distinct = lambda grads: (distinct(grads)[0] | {{
            m: np.asarray(g, dtype=np.float64).reshape(-1) for m, g in grads.items()}}, {{}})
        anew = backend.handle("run", req)
        for a, b in zip(reused.tensors, anew.tensors):
            pa, pb = a.numeric.projections, b.numeric.projections
            assert pa.keys() == pb.keys() == {{"numeric", "default", "custom"}}
            for k in pa:
                assert np.array_equal(pa[k], pb[k]), (a.name, k)
    """
    in_fresh_process(code)


def test_modes_with_other_gradients_get_their_own_dots(engine, examples_dir):
    """The straight-through round: default's gradient is zeros, custom's ones (upstream ones)."""
    from gradviz.backends.numeric_dirs import rademacher

    s = RunSettings(shape=(N,), modes=("default", "custom", "numeric"), timeout=300)
    req = RunRequest(str(examples_dir / "tutorial_torch.py"), "RoundSTE", "torch", s)
    [res] = engine.run([req])
    assert res.status == "ok" and not res.mode_errors
    x = res.tensor("x")
    assert np.array_equal(x.grads["default"], np.zeros(N)) and np.all(x.grads["custom"] == 1)
    p = x.numeric.projections
    assert np.array_equal(p["default"], np.zeros(16))
    want = rademacher("x", (N,), 16).sum(axis=1) / np.sqrt(N)
    np.testing.assert_allclose(p["custom"], want, rtol=1e-10)
