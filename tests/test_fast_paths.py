"""Adversarial checks of issue 15's speed changes (compare's all-finite fast path, TF's shared
buffers, leaf_array without a copy, the kept quick pass): odd third-party ops and odd arrays must
get exactly the gradients and verdicts the slow paths gave, and the app's two passes exactly what
`gradviz run`'s one pass gives."""

import gc

import numpy as np
import pytest

from gradviz.backends.graphs import input_values
from gradviz.compare.metrics import Tol, mode_stats, pair_metrics
from gradviz.model import RunRequest, RunSettings

TOL = Tol(rtol=1e-5, atol=1e-6)


# --- compare: the all-finite fast path (d79abbe) -----------------------------------------------
@np.errstate(over="ignore", invalid="ignore")  # the overflow case overflows here too
def _masked_pair_metrics(a, b, tol):
    """pair_metrics with every NaN/Inf mask and copy taken (as before the fast path, with an
    infinite reference no longer taken as close to a finite value or the other infinity)."""
    a, b = np.asarray(a, dtype=np.float64).reshape(-1), np.asarray(b, dtype=np.float64).reshape(-1)
    fin_b = b[np.isfinite(b)]
    atol = tol.atol * max(1.0, float(np.abs(fin_b).max()) if fin_b.size else 0.0)
    with np.errstate(invalid="ignore"):
        ok = np.abs(a - b) <= atol + tol.rtol * np.abs(b)
    both = np.isfinite(a) & np.isfinite(b)
    ok = (ok & both) | (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))
    fa, fb = a[both], b[both]
    err = np.abs(fa - fb)
    max_abs = float(err.max()) if err.size else 0.0
    worst = int(np.flatnonzero(both)[int(err.argmax())]) if err.size and max_abs > 0 else None
    scale = np.maximum(np.abs(fa), np.abs(fb))
    rel = err[scale > atol] / scale[scale > atol]
    na, nb = float(np.sqrt(np.sum(fa * fa))), float(np.sqrt(np.sum(fb * fb)))
    if na == 0.0 and nb == 0.0:
        cosine, ratio = 1.0, 1.0
    elif na == 0.0 or nb == 0.0:
        cosine, ratio = None, (0.0 if na == 0.0 else None)
    else:
        cosine, ratio = float(np.clip(np.dot(fa, fb) / (na * nb), -1.0, 1.0)), na / nb
    n_differ = int((~ok).sum())
    return {
        "n": int(b.size),
        "n_differ": n_differ,
        "allclose": n_differ == 0,
        "max_abs_err": max_abs,
        "max_rel_err": float(rel.max()) if rel.size else 0.0,
        "cosine": cosine,
        "norm_ratio": ratio,
        "worst_index": worst,
        "atol": atol,
        "rtol": tol.rtol,
    }


def _same(x, y) -> bool:
    return x == y or (isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y))


_R = np.random.default_rng(3).standard_normal(1000)
PAIRS = {
    "nan in the gradient only": (np.where(np.arange(1000) == 17, np.nan, _R), _R),
    "nan in the reference only": (_R, np.where(np.arange(1000) == 17, np.nan, _R)),
    "inf in one, nan in the other": (
        np.where(np.arange(1000) == 5, np.inf, _R),
        np.where(np.arange(1000) == 5, np.nan, _R),
    ),
    "opposite infinities": (np.array([np.inf, 1.0]), np.array([-np.inf, 1.0])),
    "the worst element after a nan": (
        np.array([np.nan, 1.0, 2.0, 9.0]),
        np.array([np.nan, 1.0, 2.0, 3.0]),
    ),
    "-0.0 against 0.0": (np.array([-0.0, 0.0, -0.0]), np.array([0.0, -0.0, 0.0])),
    "subnormals": (np.array([5e-324, 1e-310, 0.0]), np.array([0.0, 2e-310, 5e-324])),
    "overflowing difference": (np.array([1e308, 1.0]), np.array([-1e308, 1.0])),
    "empty": (np.zeros(0), np.zeros(0)),
    "int arrays": (np.array([1, 2, 3], dtype=np.int64), np.array([1, 2, 4], dtype=np.int32)),
    "float32 against float64": (_R.astype(np.float32), _R),
    "transposed gradient": (
        np.arange(12.0).reshape(3, 4).T,
        np.arange(12.0).reshape(3, 4).T.copy(),
    ),
    "same size, other shape": (np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)),
    # the all-finite path's shortcut for bitwise-equal arrays, and near misses of it
    "identical float32 gradients": (_R.astype(np.float32), _R.astype(np.float32)),
    "one element off": (np.where(np.arange(1000) == 999, 0.5, _R), _R),
    "zeros against a gradient": (np.zeros(1000), _R),
    "tiny values under the absolute tolerance": (_R * 1e-9, _R * 2e-9),
}


@pytest.mark.parametrize("case", sorted(PAIRS))
def test_pair_metrics_fast_path_gives_what_the_masked_code_gave(case):
    a, b = PAIRS[case]
    got, want = pair_metrics(a, b, TOL).as_dict(), _masked_pair_metrics(a, b, TOL)
    assert got.keys() == want.keys()
    assert all(_same(got[k], want[k]) for k in got), (got, want)


def test_pair_metrics_odd_arrays_exact_values():
    nan_one = pair_metrics(*PAIRS["nan in the gradient only"], TOL)
    assert (nan_one.n_differ, nan_one.allclose, nan_one.max_abs_err) == (1, False, 0.0)
    worst = pair_metrics(*PAIRS["the worst element after a nan"], TOL)
    assert (worst.worst_index, worst.max_abs_err, worst.n_differ) == (3, 6.0, 1)
    zeros = pair_metrics(*PAIRS["-0.0 against 0.0"], TOL)
    assert (zeros.allclose, zeros.cosine, zeros.norm_ratio) == (True, 1.0, 1.0)
    # an Inf reference made the bound infinite: +Inf was "close" to -Inf, and 1.0 to Inf
    inf = pair_metrics(*PAIRS["opposite infinities"], TOL)
    assert (inf.n_differ, inf.allclose) == (1, False)
    finite_vs_inf = pair_metrics(np.array([1.0, 2.0]), np.array([np.inf, 2.0]), TOL)
    assert (finite_vs_inf.n_differ, finite_vs_inf.allclose) == (1, False)
    same_inf = pair_metrics(np.array([np.inf, np.nan]), np.array([np.inf, np.nan]), TOL)
    assert (same_inf.n_differ, same_inf.allclose) == (0, True)
    assert pair_metrics(np.zeros(3), np.zeros(4), TOL).shape_mismatch == "(3,) vs (4,)"
    empty = pair_metrics(np.zeros(0), np.zeros(0), TOL)
    assert (empty.n, empty.n_differ, empty.worst_index, empty.atol) == (0, 0, None, 1e-6)


def test_mode_stats_counts_and_leaves_out_nonfinite_values():
    s = mode_stats(np.array([np.nan, -np.inf, -0.0, 2.0, 4.0]))
    assert (s.n, s.nan, s.inf, s.zeros) == (5, 1, 1, 1)
    assert (s.min, s.max, s.mean, s.abs_max, s.l2) == (-0.0, 4.0, 2.0, 4.0, float(np.sqrt(20.0)))
    e = mode_stats(np.zeros(0))
    assert (e.n, e.nan, e.min, e.l2) == (0, 0, None, None)
    assert TOL.atol_for(np.array([np.inf, -3.0, np.nan])) == 3e-6  # peak over finite only
    assert TOL.atol_for(np.array([np.nan])) == 1e-6


# --- parity: an Inf in one framework only is no match ------------------------------------------
INF_TORCH = """
    import torch
    import gradviz

    @gradviz.op(name="inf_in_tf")
    class InfInTf(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0
"""
INF_TF = """
    import tensorflow as tf
    import gradviz

    @gradviz.op(name="inf_in_tf")
    @tf.custom_gradient
    def inf_in_tf(x):
        def grad(g):   # the first element's gradient overflows in this framework only
            first = tf.range(tf.size(x)) == 0
            return g * tf.where(first, tf.constant(float("inf"), g.dtype), tf.constant(2.0, g.dtype))
        return x * 2.0, grad
"""


def test_parity_says_differs_where_one_framework_gives_inf(engine, write_module):
    from gradviz.compare import parity

    settings = RunSettings(shape=(8,), modes=("custom", "default"), timeout=300)
    results = engine.run(
        [
            RunRequest(write_module("inf_torch.py", INF_TORCH), "InfInTf", "torch", settings),
            RunRequest(write_module("inf_tf.py", INF_TF), "inf_in_tf", "tf", settings),
        ]
    )
    assert [r.status for r in results] == ["ok", "ok"], [r.error for r in results]
    torch_x, tf_x = results[0].tensor("x"), results[1].tensor("x")
    np.testing.assert_array_equal(torch_x.grads["custom"], np.full(8, 2.0))
    assert np.isposinf(tf_x.grads["custom"][0]) and np.all(tf_x.grads["custom"][1:] == 2.0)
    rows = {(r.tensor, r.mode): r for r in parity(results)}
    assert rows[("x", "custom")].verdict == "differs"
    assert "differs at 1 of 8 elements" in rows[("x", "custom")].note
    assert rows[("x", "default")].verdict == "match"
    assert rows[("x", "value")].verdict == "match"


# --- the app's two passes (7b4e057) against odd ops --------------------------------------------
SMALL = RunSettings(shape=(40,), modes=("custom", "default", "numeric"), timeout=300)


def _same_result(two, one) -> None:
    """Every value, gradient, reason and numeric projection of the two-pass result exactly the
    one-pass one (same seeds, same directions, same forwards)."""
    assert two.status == one.status == "ok" and not two.partial, (two.error, one.error)
    assert two.request == one.request and two.mode_errors.keys() == one.mode_errors.keys()
    assert two.inplace_inputs == one.inplace_inputs
    assert [t.name for t in two.tensors] == [t.name for t in one.tensors]
    for a, b in zip(two.tensors, one.tensors):
        assert (a.role, a.shape, a.dtype, a.absent) == (b.role, b.shape, b.dtype, b.absent)
        np.testing.assert_array_equal(a.value, b.value)
        assert sorted(a.grads) == sorted(b.grads), a.name
        for mode in a.grads:
            np.testing.assert_array_equal(a.grads[mode], b.grads[mode], err_msg=f"{a.name} {mode}")
        assert (a.numeric is None) == (b.numeric is None)
        if a.numeric is not None:
            assert (a.numeric.method, a.numeric.eps) == (b.numeric.method, b.numeric.eps)
            for k in a.numeric.projections:
                np.testing.assert_array_equal(a.numeric.projections[k], b.numeric.projections[k])


def _verdicts(res) -> dict:
    from gradviz.compare import compare_result

    return {t.name: t.verdict for t in compare_result(res).tensors}


WRITES_INPUT = """
    import torch

    class WritesInput(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.detach().mul_(2.0)      # writes the caller's tensor: out = 6 * the input given
            return x * 3.0

        @staticmethod
        def backward(ctx, g):
            return g * 3.0            # wrong for the input given: d out / d x = 6
"""


def test_an_op_writing_its_input_gets_the_one_pass_result_and_no_match(engine, write_module):
    """The quick pass's leaves are copies (torch.tensor), the reported input is the value before
    the op ran, and numeric sees a fresh input per forward: two passes give exactly one pass's
    numbers, and custom (3) is not called a match against what the op does (6)."""
    req = RunRequest(write_module("writes_input.py", WRITES_INPUT), "WritesInput", "torch", SMALL)
    [one] = engine.run([req])
    partial = []
    [two] = engine.run([req], on_partial=partial.append)
    _same_result(two, one)
    x = two.tensor("x")
    np.testing.assert_array_equal(x.value, input_values(0, "x", (40,)).astype(np.float32))
    np.testing.assert_array_equal(x.grads["custom"], np.full(40, 3.0, np.float32))
    np.testing.assert_allclose(x.grads["numeric"], 6.0, rtol=1e-6)
    assert two.inplace_inputs == ("x",)
    assert _verdicts(two)["x"] != "match"


COUNTER = """
    import torch
    CALLS = [0]

    class CountsCalls(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            CALLS[0] += 1             # state that changes per call: out = x * (number of calls)
            ctx.k = float(CALLS[0])
            return x * ctx.k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k
"""


def test_an_op_with_state_shows_the_gradients_of_one_quick_run_and_no_match(engine, write_module):
    """custom and default of the final result are the very arrays the quick pass showed (one
    run: default is the call after custom's), and the changing forward is never a match."""
    req = RunRequest(write_module("counts_calls.py", COUNTER), "CountsCalls", "torch", SMALL)
    partial = []
    [two] = engine.run([req], on_partial=partial.append)
    [quick] = partial
    # the forward changes per call: the numeric reference refuses it (numeric.ForwardNotRepeatable)
    assert two.status == "ok" and set(two.mode_errors) == {"numeric"}
    assert two.mode_errors["numeric"].type == "ForwardNotRepeatable"
    x, qx = two.tensor("x"), quick.tensor("x")
    assert x.grads["custom"] is qx.grads["custom"] and x.grads["default"] is qx.grads["default"]
    k = float(x.grads["custom"][0])
    assert k >= 1 and np.all(x.grads["custom"] == k) and np.all(x.grads["default"] == k + 1)
    assert _verdicts(two)["x"] != "match"


@pytest.mark.parametrize(
    "change",
    [
        {"seed": 1},
        {"dtype": "float64"},
        {"shape": (41,)},
        {"upstream": "random"},
        {"graph": "mlp"},
        {"device": "cpu"},
    ],
)
def test_a_kept_quick_pass_is_never_used_for_other_settings(engine, examples_dir, change):
    """The worker kept the quick pass of one settings set; a numeric pass asked with another
    (seed, dtype, shape, upstream, graph, device) runs in full, giving that request's one-pass result."""
    req = RunRequest(str(examples_dir / "tutorial_torch.py"), "MulWeights", "torch", SMALL)
    other = RunRequest(req.file, req.qualname, "torch", SMALL.with_(**change))
    worker = engine.workers["torch"]
    worker.call(
        "run:keep",
        RunRequest(req.file, req.qualname, "torch", SMALL.with_(modes=("custom", "default"))),
        300,
    )
    reply = worker.call("run:numeric", other, 300)
    res = reply.result
    assert reply.whole
    [one] = engine.run([other])
    _same_result(res, one)


def test_the_same_op_twice_and_same_names_in_two_files(engine, write_module, examples_dir):
    """One batch asks for one op twice and for two ops of one name in two files: each final
    result is its own op's one-pass result, on_partial and on_result come once per request."""
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
    import os

    a = write_module("scale.py", src.format(k=2.0))
    os.makedirs(os.path.join(os.path.dirname(a), "other"))
    b = write_module(os.path.join("other", "scale.py"), src.format(k=3.0))
    reqs = [RunRequest(p, "Scale", "torch", SMALL) for p in (a, a, b)]
    ones = engine.run(reqs)
    partial, finals = [], []
    twos = engine.run(reqs, on_result=finals.append, on_partial=partial.append)
    assert len(partial) == 3 and len(finals) == 3
    for two, one, k in zip(twos, ones, (2.0, 2.0, 3.0)):
        _same_result(two, one)
        np.testing.assert_array_equal(two.tensor("x").grads["custom"], np.full(40, k, np.float32))
        np.testing.assert_allclose(two.tensor("x").grads["numeric"], k, rtol=1e-6)
        assert _verdicts(two)["x"] == "match"


CRASHES = """
    import os
    import torch

    class Crashes(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            os._exit(3)

        @staticmethod
        def backward(ctx, g):
            return g
"""


def test_a_worker_replaced_between_the_passes_runs_the_op_in_full(
    engine, write_module, examples_dir
):
    """Another op crashes the torch worker after MulWeights' quick pass: the new worker holds
    nothing kept, and MulWeights' final result is still exactly its one-pass result."""
    req = RunRequest(str(examples_dir / "tutorial_torch.py"), "MulWeights", "torch", SMALL)
    crash = RunRequest(write_module("crashes.py", CRASHES), "Crashes", "torch", SMALL)
    [one] = engine.run([req])
    partial = []
    two, crashed = engine.run([req, crash], on_partial=partial.append)
    assert [p.request.qualname for p in partial] == ["MulWeights"]
    assert crashed.status == "error" and crashed.error.kind == "crashed"
    _same_result(two, one)
    assert _verdicts(two) == _verdicts(one)


def test_a_file_edited_and_edited_back_between_the_passes(engine, write_module):
    """The op file changes after the quick pass and changes back: whatever the worker makes of
    it (kept pass or a full run), the result is the one pass of the file as it is now."""
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
    path = write_module("edited_back.py", src.format(k=2.0))
    req = RunRequest(path, "Scale", "torch", SMALL)
    worker = engine.workers["torch"]
    quick = worker.call(
        "run:keep",
        RunRequest(path, "Scale", "torch", SMALL.with_(modes=("custom", "default"))),
        300,
    )
    write_module("edited_back.py", src.format(k=5.0))
    worker.call("load", [path], 300)  # the worker sees the edit in between
    write_module("edited_back.py", src.format(k=2.0))
    reply = worker.call("run:numeric", req, 300)
    from gradviz.engine.numeric_pass import with_numeric

    two = reply.result if reply.whole else with_numeric(quick, reply.result, req)
    [one] = engine.run([req])
    _same_result(two, one)
    np.testing.assert_allclose(two.tensor("x").grads["numeric"], 2.0, rtol=1e-6)


def test_kept_runs_drop_the_oldest_and_a_too_big_one_replaces_nothing_stale():
    from gradviz.backends.kept import KeptRuns, QuickRun

    def run(n):
        return QuickRun(
            None,
            None,
            None,
            {},
            [],
            None,
            "cpu",
            {
                "x": {
                    "role": "input",
                    "value": np.zeros(n),
                    "grads": {"custom": np.zeros(n)},
                    "absent": {},
                }
            },
        )

    kept = KeptRuns(max_bytes=3 * 16 * 10)
    assert kept.put("a", run(10)) and kept.put("b", run(10)) and kept.put("c", run(10))
    assert kept.put("d", run(10)) and len(kept) == 3 and kept.take("a") is None
    assert not kept.put("b", run(1000))  # too big to keep: and b's old pass is gone
    assert kept.take("b") is None and kept.take("c") is not None and kept.take("c") is None


# --- TF's shared buffers (a69ab5b) against odd ops, around the 1 MiB threshold ----------------
TF_ODD = """
    import numpy as np
    import tensorflow as tf
    import gradviz

    @gradviz.op(name="passes_through")
    @tf.custom_gradient
    def passes_through(x):
        def grad(g):
            return g                  # the gradient is the upstream tensor itself
        return tf.identity(x), grad   # the output is the input's buffer

    @gradviz.op(name="doubles_in_numpy")
    @tf.custom_gradient
    def doubles_in_numpy(x):
        def grad(g):                  # numpy code writing into the array it is given
            return tf.numpy_function(lambda a: np.multiply(a, 2, out=a), [g], g.dtype)
        return tf.numpy_function(lambda a: np.multiply(a, 2, out=a), [x], x.dtype), grad

    @gradviz.op(name="transposed")
    @tf.custom_gradient
    def transposed(x):
        def grad(g):
            return tf.transpose(g)
        return tf.transpose(x), grad
"""
# a float64 leaf of 131072 elements is exactly tf_arrays.ZERO_COPY_BYTES: shared; one less: copied
AROUND = [(131071,), (131072,)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", AROUND)
def test_tf_ops_passing_buffers_through_give_exact_values(engine, write_module, shape, dtype):
    from gradviz.seeds import upstream_values

    path = write_module("tf_odd.py", TF_ODD)
    s = RunSettings(
        shape=shape,
        dtype=dtype,
        modes=("custom", "default"),
        upstream="random",
        seed=5,
        timeout=300,
    )
    got = engine.run([RunRequest(path, q, "tf", s) for q in ("passes_through", "doubles_in_numpy")])
    assert [r.status for r in got] == ["ok", "ok"], [r.error for r in got]
    x0 = input_values(5, "x", shape).astype(dtype)
    up = upstream_values(s, "out", shape).astype(dtype)
    same, doubled = ({t.name: t for t in r.tensors} for r in got)
    for t in (same, doubled):
        assert t["x"].value.dtype == np.dtype(dtype) and t["x"].value.tobytes() == x0.tobytes()
    assert same["out"].value.tobytes() == x0.tobytes()
    for mode in ("custom", "default"):
        assert same["x"].grads[mode].tobytes() == up.tobytes(), mode
        assert same["out"].grads[mode].tobytes() == up.tobytes(), mode
    assert doubled["out"].value.tobytes() == (2 * x0).tobytes()
    assert doubled["x"].grads["custom"].tobytes() == (2 * up).tobytes()
    assert doubled["out"].grads["custom"].tobytes() == up.tobytes()  # not written by grad's numpy
    assert "default" not in doubled["x"].grads and "default" in doubled["x"].absent


def test_tf_results_stay_exact_after_many_runs_and_gc(engine, write_module):
    """Results read from TF's own buffers (zero-copy) must not change when later runs reuse
    memory: the first run's arrays are checked again after four more runs and a collection."""
    from gradviz.seeds import upstream_values

    path = write_module("tf_odd.py", TF_ODD)
    s = RunSettings(
        shape=(256, 1024), modes=("custom", "default", "numeric"), upstream="random", timeout=300
    )
    req = RunRequest(path, "transposed", "tf", s)
    [first] = engine.run([req], on_partial=lambda r: None)
    for seed in range(1, 5):
        engine.run([RunRequest(path, "transposed", "tf", s.with_(seed=seed))])
    gc.collect()
    x0 = input_values(0, "x", (256, 1024)).astype(np.float32)
    up = upstream_values(s, "out", (1024, 256)).astype(np.float32)
    assert first.status == "ok", first.error
    x, out = first.tensor("x"), first.tensor("out")
    assert x.value.tobytes() == x0.tobytes() and out.shape == (1024, 256)
    assert out.value.tobytes() == np.ascontiguousarray(x0.T).tobytes()
    for mode in ("custom", "default"):
        assert x.grads[mode].tobytes() == np.ascontiguousarray(up.T).tobytes(), mode
        assert out.grads[mode].tobytes() == up.tobytes(), mode
    assert _verdicts(first) == {"x": "match", "out": "match"}


# --- a backward that writes its upstream gradient in place --------------------------------------
CLIPS_IN_PLACE = """
    import torch

    class ClipsGradInPlace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g.clamp_(-0.5, 0.5)    # clips the gradient it is handed, in place
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_backward_clipping_its_upstream_in_place_is_no_match(engine, write_module, dtype):
    """custom is the upstream clipped to [-0.5, 0.5]; the true gradient (default, numeric) is the
    upstream itself. The clip must not reach the upstream that default and numeric use."""
    from gradviz.seeds import upstream_values

    s = SMALL.with_(dtype=dtype, upstream="random", seed=2)
    req = RunRequest(write_module("clips.py", CLIPS_IN_PLACE), "ClipsGradInPlace", "torch", s)
    [one] = engine.run([req])
    [two] = engine.run([req], on_partial=lambda r: None)
    _same_result(two, one)
    up = upstream_values(s, "out", (40,)).astype(dtype)
    assert np.any(np.abs(up) > 0.5)
    x = one.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], np.clip(up, -0.5, 0.5))
    np.testing.assert_array_equal(x.grads["default"], up)
    np.testing.assert_allclose(x.grads["numeric"], up, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(one.tensor("out").grads["default"], up)
    assert _verdicts(one)["x"] != "match"


@pytest.mark.parametrize("with_on_checks", [False, True])
def test_two_passes_with_contract_checks_give_the_one_pass_result(
    engine, examples_dir, with_on_checks
):
    """Checks enabled: the quick pass is not kept (run_numeric runs in full) or the checks run
    in a pass of their own; either way gradients and checks are exactly one pass's."""
    s = SMALL.with_(checks=("noncontiguous_upstream", "precision"))
    req = RunRequest(str(examples_dir / "tutorial_torch.py"), "RoundSTE", "torch", s)
    [one] = engine.run([req])
    checked = []
    extra = {"on_checks": checked.append} if with_on_checks else {}
    [two] = engine.run([req], on_partial=lambda r: None, **extra)
    _same_result(two, one)
    assert [(c.name, c.status) for c in two.checks] == [(c.name, c.status) for c in one.checks]
    assert [c.name for c in one.checks] == ["noncontiguous_upstream", "precision"]
    assert len(checked) == (1 if with_on_checks else 0)
    assert _verdicts(two) == _verdicts(one) == {"x": "surrogate", "out": "match"}


def test_a_request_without_numeric_beside_the_same_op_with_it(engine, examples_dir):
    """One batch holds an op without the numeric mode and the same op with it: the first must
    not take the second's kept quick pass (it would get a numeric mode nobody asked for), and
    each result is exactly its own one-pass result."""
    plain = RunRequest(
        str(examples_dir / "tutorial_torch.py"),
        "MulWeights",
        "torch",
        SMALL.with_(modes=("custom", "default")),
    )
    full = RunRequest(plain.file, plain.qualname, "torch", SMALL)
    ones = engine.run([plain, full])
    partial = []
    twos = engine.run([plain, full], on_partial=partial.append)
    assert [p.request for p in partial] == [plain]  # the quick pass of `full`
    for two, one in zip(twos, ones):
        _same_result(two, one)
    assert "numeric" not in twos[0].tensor("x").grads and "numeric" in twos[1].tensor("x").grads


TF_VARIABLE = """
    import tensorflow as tf
    import gradviz

    COUNT = tf.Variable(tf.zeros([300000], tf.float32))   # bumped in place by every call

    @gradviz.op(name="returns_a_variable")
    @tf.custom_gradient
    def returns_a_variable(x):
        COUNT.assign_add(tf.ones_like(COUNT))
        def grad(g, variables=None):
            return g * 0.0, [tf.zeros_like(v) for v in variables or ()]
        return tf.convert_to_tensor(COUNT), grad   # the output is the variable's own buffer
"""


def test_tf_output_that_is_a_variables_buffer_keeps_its_value(engine, write_module):
    """Results are read from TF's buffers without a copy: an output that is a variable's buffer,
    assigned in place again by the next mode's call, must still show the value it had."""
    s = RunSettings(shape=(300000,), modes=("custom", "default"), timeout=300)
    [res] = engine.run(
        [RunRequest(write_module("tf_variable.py", TF_VARIABLE), "returns_a_variable", "tf", s)]
    )
    assert res.status == "ok", res.error
    k = float(res.outputs["custom"][0])
    assert k >= 1 and np.all(res.outputs["custom"] == k)
    assert np.all(res.outputs["default"] == k + 1)  # the next call's, not a shared buffer
    assert np.all(res.tensor("out").value == k)


# --- background priority (e87124c): every thread of the worker gets its priority back ---------
def _nice_of_threads(pid: int) -> dict:
    import os

    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                out[int(tid)] = int(fh.read().rsplit(")", 1)[1].split()[16])  # field 19: nice
        except (OSError, IndexError, ValueError):  # the thread ended meanwhile
            pass
    return out


@pytest.mark.parametrize(
    "file, qualname, framework",
    [("tutorial_torch.py", "MulWeights", "torch"), ("tutorial_tf.py", "mul_weights", "tf")],
)
def test_the_numeric_pass_gives_every_worker_thread_its_priority_back(
    engine, examples_dir, file, qualname, framework
):
    """The app's numeric pass lowers every thread of the worker; afterwards each thread, those
    the pass started included (TF's pool, the direction-drawing thread), runs at the worker's
    own priority again, so the next quick pass or `gradviz run` is not slowed."""
    worker = engine.workers[framework]
    engine.run(
        [RunRequest(str(examples_dir / file), qualname, framework, SMALL.with_(modes=("custom",)))]
    )  # a started, answering worker
    pid = worker.pid()
    base = _nice_of_threads(pid)[pid]
    if base >= 10:
        pytest.skip("the worker already runs at background priority")
    s = RunSettings(shape=(20000,), modes=("custom", "default", "numeric"), timeout=300)
    [res] = engine.run(
        [RunRequest(str(examples_dir / file), qualname, framework, s)], on_partial=lambda r: None
    )
    assert res.status == "ok" and worker.pid() == pid, res.error
    after = _nice_of_threads(pid)
    assert len(after) > 1 and set(after.values()) == {base}, after


# --- each framework goes on to its numeric pass at once (4417977) ------------------------------
def test_partials_and_results_once_each_in_order_with_a_skip_in_between(engine, examples_dir):
    """Two ops per framework; the first torch op is skipped as its partial result arrives
    (between its passes). Every request gets on_partial at most once and on_result exactly
    once, each op's partial before its final; the skipped op keeps its quick pass, its numeric
    mode 'skipped by the user', the others give exactly their one-pass results."""
    import threading

    reqs = [
        RunRequest(str(examples_dir / f), q, fw, SMALL)
        for f, q, fw in (
            ("tutorial_torch.py", "MulWeights", "torch"),
            ("tutorial_tf.py", "mul_weights", "tf"),
            ("tutorial_torch.py", "RoundSTE", "torch"),
            ("tutorial_tf.py", "round_ste", "tf"),
        )
    ]
    ones = engine.run(reqs[1:])
    skip_key = ("torch", reqs[0].file, "MulWeights")
    events, lock = [], threading.Lock()

    partials = {}

    def on_partial(res):
        with lock:
            events.append(("partial", res.request.qualname))
            partials[res.request.qualname] = res
        if res.request.qualname == "MulWeights":
            engine.skip(skip_key)

    def on_result(res):
        with lock:
            events.append(("final", res.request.qualname))

    twos = engine.run(reqs, on_result=on_result, on_partial=on_partial)
    names = [r.qualname for r in reqs]
    assert [r.request.qualname for r in twos] == names
    for name in names:
        assert [e for e in events if e[1] == name] == [("partial", name), ("final", name)], events
    skipped = twos[0]
    assert skipped.status == "ok" and skipped.error is None and not skipped.partial
    assert skipped.numeric_cancelled and skipped.request == reqs[0]
    assert (
        skipped.mode_errors["numeric"].message
        == "the numeric pass was skipped by the user before it finished"
    )
    quick = partials["MulWeights"]
    for t in skipped.tensors:  # the quick pass's very arrays, numeric missing
        assert "numeric" not in t.grads
        assert all(g is quick.tensor(t.name).grads[m] for m, g in t.grads.items())
    for two, one in zip(twos[1:], ones):
        _same_result(two, one)


TF_HALF = """
    import tensorflow as tf
    import gradviz

    @gradviz.op(name="to_half")
    @tf.custom_gradient
    def to_half(x):                          # an output of another dtype than the run's
        return tf.cast(x, tf.float16), lambda g: tf.cast(g, x.dtype)

    @gradviz.op(name="to_bfloat16")
    @tf.custom_gradient
    def to_bfloat16(x):
        return tf.cast(x, tf.bfloat16), lambda g: tf.cast(g, x.dtype)
"""


@pytest.mark.parametrize("qualname, half", [("to_half", "float16"), ("to_bfloat16", "bfloat16")])
def test_tf_half_precision_outputs_of_big_inputs_are_exact(engine, write_module, qualname, half):
    """A float32 run whose op outputs float16 / bfloat16 above the zero-copy size: the output,
    its upstream (cast to the output's dtype, not shared) and the input's gradient are what TF
    gives for the same arrays."""
    import ml_dtypes  # numpy's names for bfloat16 (TF's own dependency; no TF import here)

    from gradviz.seeds import upstream_values

    np_half = np.float16 if half == "float16" else ml_dtypes.bfloat16
    s = RunSettings(
        shape=(300000,), modes=("custom", "default"), upstream="random", seed=3, timeout=300
    )
    [res] = engine.run([RunRequest(write_module("tf_half.py", TF_HALF), qualname, "tf", s)])
    assert res.status == "ok", res.error
    x0 = input_values(3, "x", (300000,)).astype(np.float32)
    up = upstream_values(s, "out", (300000,)).astype(np_half)  # the upstream in out's dtype
    got = res.tensor("out").value
    # IEEE round-to-nearest-even casts, as TF's Cast does; the Cast's gradient casts back.
    # bfloat16 reaches the host as float32, which holds every bfloat16 value exactly (numpy's
    # ml_dtypes bfloat16 is no float kind: such an output read as having no gradient at all)
    want = x0.astype(np_half) if half == "float16" else x0.astype(np_half).astype(np.float32)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    for mode in ("custom", "default"):
        assert res.tensor("x").grads[mode].tobytes() == up.astype(np.float32).tobytes(), mode


def test_what_a_worker_keeps_is_bounded_by_its_memory_limit():
    """A worker whose limit (GRADVIZ_WORKER_MEMORY) is low keeps a quarter of it, never the
    whole 512 MiB: the parent would kill it for memory the kept quick passes hold."""
    from gradviz.backends.kept import KEEP_MAX_BYTES, keep_bound

    assert keep_bound(1 << 30) == 256 << 20
    assert keep_bound(64 << 30) == KEEP_MAX_BYTES == 512 << 20
    assert keep_bound(0) == KEEP_MAX_BYTES  # no limit set
