"""The numeric reference evaluated in batches where the op allows it, one at a time where not:
exact gradients either way, and the probe's decision checked where it matters."""

import numpy as np
import pytest
from fresh_process import in_fresh_process

from gradviz.backends.graphs import input_values
from gradviz.model import RunRequest, RunSettings

F64 = RunSettings(dtype="float64", modes=("default", "custom", "numeric"), timeout=300)

ELEMENTWISE_TORCH = """
    import torch
    class Poly(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w + x * x
        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * (w + 2 * x), g * x
"""
ELEMENTWISE_TF = """
    import tensorflow as tf
    @tf.custom_gradient
    def poly(x, w):
        def grad(g):
            return g * (w + 2 * x), g * x
        return x * w + x * x, grad
"""
# Sums over every element: with a batch dimension in front it would mix the rows.
MIXING_TORCH = """
    import torch
    class TimesTotal(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x.sum()
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.sum() + (g * x).sum()
"""
MIXING_TF = """
    import tensorflow as tf
    @tf.custom_gradient
    def times_total(x):
        def grad(g):
            return g * tf.reduce_sum(x) + tf.reduce_sum(g * x)
        return x * tf.reduce_sum(x), grad
"""
# Writes into its second input (autograd allows it inside a Function's forward).
IN_PLACE_TORCH = """
    import torch
    class ScalesItsInput(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            out = x * w
            w.mul_(2)
            return out
        @staticmethod
        def backward(ctx, g):
            return g, g
"""


def run(engine, path, qualname, fw, settings):
    [res] = engine.run([RunRequest(str(path), qualname, fw, settings)])
    assert res.status == "ok", res.error
    assert "numeric" not in res.mode_errors, res.mode_errors
    return res


@pytest.mark.parametrize(
    "fw,source,qualname", [("torch", ELEMENTWISE_TORCH, "Poly"), ("tf", ELEMENTWISE_TF, "poly")]
)
@pytest.mark.parametrize("shape", [(200,), (4, 6)])
def test_elementwise_op_numeric_is_the_exact_gradient(
    engine, write_module, fw, source, qualname, shape
):
    path = write_module(f"poly_{fw}.py", source)
    res = run(engine, path, qualname, fw, F64.with_(shape=shape))
    x, w = input_values(0, "x", shape), input_values(0, "w", shape)
    np.testing.assert_allclose(res.tensor("x").grads["numeric"], w + 2 * x, atol=1e-6)
    np.testing.assert_allclose(res.tensor("w").grads["numeric"], x, atol=1e-6)
    np.testing.assert_allclose(res.tensor("out").grads["numeric"], np.ones(shape), atol=1e-6)


@pytest.mark.parametrize(
    "fw,source,qualname", [("torch", MIXING_TORCH, "TimesTotal"), ("tf", MIXING_TF, "times_total")]
)
def test_op_that_mixes_rows_still_gets_the_exact_gradient(
    engine, write_module, fw, source, qualname
):
    path = write_module(f"mixing_{fw}.py", source)
    res = run(engine, path, qualname, fw, F64.with_(shape=(50,)))
    x = input_values(0, "x", (50,))
    # loss = sum(x) * sum(x): every element's derivative is 2 * sum(x)
    np.testing.assert_allclose(
        res.tensor("x").grads["numeric"], np.full(50, 2 * x.sum()), rtol=1e-6
    )


def test_op_writing_into_its_input_is_evaluated_on_fresh_copies(engine, write_module):
    path = write_module("in_place.py", IN_PLACE_TORCH)
    res = run(engine, path, "ScalesItsInput", "torch", F64.with_(shape=(30,)))
    # d/dx sum(x * w) = w as seeded, not w doubled by earlier forwards
    np.testing.assert_allclose(
        res.tensor("x").grads["numeric"], input_values(0, "w", (30,)), atol=1e-6
    )


@pytest.mark.parametrize("graph,shape", [("mlp", (5, 8)), ("seed", (40,))])
@pytest.mark.parametrize(
    "fw,source,qualname", [("torch", ELEMENTWISE_TORCH, "Poly"), ("tf", ELEMENTWISE_TF, "poly")]
)
def test_batched_graphs_agree_with_autodiff(
    engine, write_module, fw, source, qualname, graph, shape
):
    path = write_module(f"poly_{fw}.py", source)
    res = run(engine, path, qualname, fw, F64.with_(graph=graph, shape=shape))
    checked = 0
    for t in res.tensors:
        if "numeric" in t.grads:
            np.testing.assert_allclose(
                t.grads["numeric"], t.grads["default"], atol=1e-6, err_msg=f"{fw} {graph} {t.name}"
            )
            checked += 1
    assert checked >= 4


def test_probe_batches_elementwise_ops_and_refuses_mixing_ones(write_module):
    """torch in a process of its own: which tensors went through batched forwards."""
    poly = write_module("Poly.py", ELEMENTWISE_TORCH)
    mixing = write_module("TimesTotal.py", MIXING_TORCH)
    in_fresh_process(f"""
        from gradviz.backends import load_backend, numeric_eval
        from gradviz.model import RunRequest, RunSettings
        seen = []
        original = numeric_eval.Evaluator.__init__
        def record(self, *args, **kwargs):
            original(self, *args, **kwargs)
            seen.append(self)
        numeric_eval.Evaluator.__init__ = record
        backend = load_backend("torch")
        settings = RunSettings(dtype="float64", shape=(20,), timeout=300)
        for path, qualname, expect in [({poly!r}, "Poly", True), ({mixing!r}, "TimesTotal", False)]:
            res = backend.run(RunRequest(path, qualname, "torch", settings))
            assert res.status == "ok" and "numeric" not in res.mode_errors, res
            # x goes through the op (which may mix rows); out is perturbed after it, so its
            # batches never pass through the op's sum and are fine either way
            assert seen[-1].batch_ok["x"] is expect, seen[-1].batch_ok
            assert seen[-1].batch_ok["out"] is True, seen[-1].batch_ok
    """)


def test_only_the_apps_second_pass_runs_numeric_at_low_priority(engine, examples_dir, monkeypatch):
    """On a machine busy with other work a lowered priority made the numeric pass ~3x slower:
    the command line (one pass) keeps its priority, the app's full pass lowers it."""
    req = RunRequest(str(examples_dir / "tutorial_torch.py"), "MulWeights", "torch", F64)
    in_fresh_process(f"""
        import contextlib
        from gradviz.backends import load_backend, runner
        from gradviz.model import RunRequest, RunSettings
        lowered = []
        @contextlib.contextmanager
        def record():
            lowered.append(True)
            yield
        runner._background_priority = record
        backend = load_backend("torch")
        req = RunRequest({req.file!r}, "MulWeights", "torch",
                         RunSettings(dtype="float64", timeout=300))
        assert backend.handle("run", req).status == "ok" and lowered == []
        assert backend.handle("run:background", req).status == "ok" and lowered == [True]
        quick = RunRequest(req.file, req.qualname, "torch", req.settings.with_(modes=("default", "custom")))
        assert backend.handle("run:keep", quick).status == "ok" and lowered == [True]
        reply = backend.handle("run:numeric", req)
        assert not reply.whole and reply.result.status == "ok" and lowered == [True, True]
    """)

    worker = engine.workers["torch"]
    kinds = []
    real_call = worker.call

    def call(kind, payload, timeout, *stop):
        kinds.append(kind)
        return real_call(kind, payload, timeout, *stop)

    monkeypatch.setattr(worker, "call", call)
    engine.run([req])
    assert kinds == ["run"]
    kinds.clear()
    partial = []
    [res] = engine.run([req], on_partial=partial.append)
    assert res.status == "ok" and len(partial) == 1
    assert kinds == ["run:keep", "run:numeric"]
