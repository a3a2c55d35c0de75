"""The app's two passes (Engine.run with on_partial): the second adds the numeric reference to
what the first made, kept in the worker, instead of differentiating the op again. The result
must be the one a single pass gives, number for number, and hold the first pass's arrays."""

import numpy as np
import pytest

from gradviz.model import RunRequest, RunSettings

FULL = RunSettings(shape=(3000,), modes=("default", "custom", "numeric"), timeout=300)


def _same_result(two, one) -> None:
    """Every value, gradient, reason and numeric projection equal (exactly: same seeds, same
    directions, same forwards)."""
    assert two.status == one.status == "ok" and not two.partial
    assert two.request == one.request
    assert two.mode_errors.keys() == one.mode_errors.keys()
    assert [t.name for t in two.tensors] == [t.name for t in one.tensors]
    for a, b in zip(two.tensors, one.tensors):
        assert (a.role, a.shape, a.dtype) == (b.role, b.shape, b.dtype)
        np.testing.assert_array_equal(a.value, b.value)
        assert list(a.grads) == list(b.grads) and a.absent == b.absent
        for mode in a.grads:
            np.testing.assert_array_equal(a.grads[mode], b.grads[mode])
        assert (a.numeric.method, a.numeric.eps, a.numeric.directions) == (
            b.numeric.method,
            b.numeric.eps,
            b.numeric.directions,
        )
        assert a.numeric.projections.keys() == b.numeric.projections.keys()
        for k in a.numeric.projections:
            np.testing.assert_array_equal(a.numeric.projections[k], b.numeric.projections[k])


@pytest.mark.parametrize(
    "file, qualname, framework",
    [
        ("tutorial_torch.py", "MulWeights", "torch"),
        ("tutorial_tf.py", "mul_weights", "tf"),
        ("tutorial_torch.py", "RoundSTE", "torch"),
    ],
)
def test_second_pass_adds_numeric_to_the_first_passs_arrays(
    engine, examples_dir, monkeypatch, file, qualname, framework
):
    req = RunRequest(str(examples_dir / file), qualname, framework, FULL)
    [one] = engine.run([req])
    worker = engine.workers[framework]
    kinds, real_call = [], worker.call

    def call(kind, payload, timeout, *stop):
        kinds.append(kind)
        return real_call(kind, payload, timeout, *stop)

    monkeypatch.setattr(worker, "call", call)
    partial = []
    [two] = engine.run([req], on_partial=partial.append)
    assert kinds == ["run:keep", "run:numeric"]
    [quick] = partial
    assert quick.partial and "numeric" not in quick.request.settings.modes
    _same_result(two, one)
    for q, t in zip(quick.tensors, two.tensors):
        assert t.value is q.value  # not sent, mapped or copied a second time
        for mode in ("custom", "default"):
            assert t.grads.get(mode) is q.grads.get(mode)
    assert two.elapsed >= quick.elapsed and two.log == quick.log + two.log[len(quick.log) :]


def test_a_worker_without_the_first_pass_runs_the_op_in_full(engine, examples_dir):
    """The worker keeps a quick pass for one numeric pass only; asked again (or after it was
    replaced), it runs the whole op and says so."""
    from gradviz.engine.numeric_pass import with_numeric

    req = RunRequest(str(examples_dir / "tutorial_tf.py"), "mul_weights", "tf", FULL)
    quick_req = RunRequest(req.file, req.qualname, "tf", FULL.with_(modes=("default", "custom")))
    [one] = engine.run([req])
    worker = engine.workers["tf"]
    quick = worker.call("run:keep", quick_req, 300)
    reply = worker.call("run:numeric", req, 300)
    part = reply.result
    assert not reply.whole and all(t.value is None for t in part.tensors)
    assert all(set(t.grads) <= {"numeric"} for t in part.tensors)
    _same_result(with_numeric(quick, part, req), one)
    reply = worker.call("run:numeric", req, 300)
    again = reply.result
    assert reply.whole
    _same_result(again, one)


def test_a_changed_file_between_the_passes_runs_in_full(engine, write_module):
    """The file changed after the quick pass: the numeric pass must not pair the old gradients
    with the new op; it runs the new one in full."""
    src = """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * {k}
            @staticmethod
            def backward(ctx, g):
                return g * {k}
    """
    path = write_module("scale_between.py", src.format(k=2.0))
    req = RunRequest(path, "Scale", "torch", FULL.with_(shape=(50,)))
    quick_req = RunRequest(path, "Scale", "torch", req.settings.with_(modes=("default", "custom")))
    worker = engine.workers["torch"]
    worker.call("run:keep", quick_req, 300)
    import os
    import time

    write_module("scale_between.py", src.format(k=3.0))
    os.utime(path, (time.time() + 5, time.time() + 5))  # a new mtime even within one tick
    reply = worker.call("run:numeric", req, 300)
    res = reply.result
    assert reply.whole and res.status == "ok"
    x = res.tensor("x")
    np.testing.assert_allclose(x.grads["custom"], 3.0, rtol=1e-6)
    np.testing.assert_allclose(x.grads["numeric"], 3.0, rtol=1e-4)


def test_the_final_analysis_takes_the_partial_ones_numbers_for_shared_arrays(engine, examples_dir):
    """analyze(final, earlier=partial analysis) says exactly what a fresh analysis says; only
    the numbers and curves of arrays the two results share are taken over, never those of
    equal-looking copies."""
    from dataclasses import replace

    from gradviz.app.analysis import analyze

    req = RunRequest(str(examples_dir / "tutorial_torch.py"), "RoundSTE", "torch", FULL)
    partial = []
    [final] = engine.run([req], on_partial=partial.append)
    early = analyze(partial[0])
    reused, fresh = analyze(final, earlier=early), analyze(final)
    assert reused.findings == fresh.findings
    assert [t.verdict for t in reused.comparison.tensors] == ["surrogate", "match"]
    for a, b, e in zip(
        reused.comparison.tensors, fresh.comparison.tensors, early.comparison.tensors
    ):
        assert (a.verdict, a.explanation, a.stats, a.metrics) == (
            b.verdict,
            b.explanation,
            b.stats,
            b.metrics,
        )
        assert a.metrics["custom~default"] is e.metrics["custom~default"]
        assert "custom~numeric" in a.metrics and "custom~numeric" not in e.metrics
    assert reused.series.keys() == fresh.series.keys()
    for key, s in reused.series.items():
        np.testing.assert_array_equal(s.y, fresh.series[key].y)
        assert (s is early.series[key]) == (key[1] != "numeric")
    copied = replace(
        final,
        tensors=tuple(
            replace(t, grads={m: g.copy() for m, g in t.grads.items()}) for t in final.tensors
        ),
    )
    again = analyze(copied, earlier=early)
    assert not any(s is early.series.get(k) for k, s in again.series.items())
    assert all(
        a.metrics["custom~default"] is not e.metrics["custom~default"]
        for a, e in zip(again.comparison.tensors, early.comparison.tensors)
    )


def test_each_worker_goes_on_to_its_numeric_pass_without_waiting_for_the_other(
    engine, examples_dir, monkeypatch
):
    """TF's numeric pass starts while torch's quick pass is still running (held here until it
    does): a worker that waited for the other framework's quick pass sat idle."""
    import threading

    tf_numeric = threading.Event()
    held = []
    real = {fw: engine.workers[fw].call for fw in ("torch", "tf")}

    def torch_call(kind, payload, timeout, *stop):
        if kind == "run:keep":
            held.append(tf_numeric.wait(60))
        return real["torch"](kind, payload, timeout, *stop)

    def tf_call(kind, payload, timeout, *stop):
        if kind == "run:numeric":
            tf_numeric.set()
        return real["tf"](kind, payload, timeout, *stop)

    monkeypatch.setattr(engine.workers["torch"], "call", torch_call)
    monkeypatch.setattr(engine.workers["tf"], "call", tf_call)
    reqs = [
        RunRequest(str(examples_dir / f), q, fw, FULL)
        for f, q, fw in (
            ("tutorial_torch.py", "MulWeights", "torch"),
            ("tutorial_tf.py", "mul_weights", "tf"),
        )
    ]
    partial = []
    results = engine.run(reqs, on_partial=partial.append)
    assert held == [True]
    assert [r.status for r in results] == ["ok", "ok"] and len(partial) == 2
    assert all("numeric" in r.tensor("x").numeric.projections for r in results)
