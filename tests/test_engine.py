"""The engine end to end: real torch and tf workers, exact gradients where they are known."""

import numpy as np
import pytest

from gradviz.model import RunRequest, RunSettings

FAST = RunSettings(modes=("custom", "default"))


def run(engine, path, qualname, framework, settings=FAST):
    [res] = engine.run([RunRequest(str(path), qualname, framework, settings)])
    assert res.status == "ok", res.error
    return res


def by_name(catalogs):
    return {(op.framework, op.name): op for cat in catalogs for op in cat.ops}


def test_discovers_examples_in_both_frameworks(engine, examples_dir):
    files = [examples_dir / "tutorial_torch.py", examples_dir / "tutorial_tf.py"]
    catalogs = engine.load(files)
    assert all(c.error is None for c in catalogs)
    ops = by_name(catalogs)
    for name in ("mul_weights", "mul_layer", "round_ste"):
        assert ("torch", name) in ops and ("tf", name) in ops
    assert ops[("torch", "mul_layer")].kind == "module"
    assert ops[("tf", "mul_layer")].kind == "layer"
    assert ops[("tf", "round_ste")].kind == "custom_gradient"
    assert ops[("torch", "round_ste")].args == ("x",)
    src = (examples_dir / "tutorial_torch.py").read_text().splitlines()
    line = ops[("torch", "round_ste")].line
    assert "class RoundSTE" in src[line - 1]


def test_straight_through_round_exact(engine, examples_dir):
    t = run(engine, examples_dir / "tutorial_torch.py", "RoundSTE", "torch").tensor("x")
    np.testing.assert_array_equal(t.grads["custom"], np.ones(200))
    np.testing.assert_array_equal(t.grads["default"], np.zeros(200))
    tf = run(engine, examples_dir / "tutorial_tf.py", "round_ste", "tf").tensor("x")
    np.testing.assert_array_equal(tf.grads["custom"], np.ones(200))
    assert "default" not in tf.grads and "None" in tf.absent["default"]
    # identical seeded inputs in both frameworks
    np.testing.assert_array_equal(t.value, tf.value)
    assert t.value.min() >= -3 and t.value.max() <= 3


def test_seed_graph_gives_23_times_weights(engine, examples_dir):
    seed = FAST.with_(graph="seed")
    for path, qualname, fw in [
        (examples_dir / "tutorial_torch.py", "MulLayer", "torch"),
        (examples_dir / "tutorial_tf.py", "MulLayer", "tf"),
    ]:
        res = run(engine, path, qualname, fw, seed)
        a, w = res.tensor("a"), res.tensor("weights")
        assert w.role == "param"
        np.testing.assert_allclose(a.grads["custom"], 23 * w.value, rtol=1e-6)
        np.testing.assert_allclose(a.grads["default"], 23 * w.value, rtol=1e-6)
        np.testing.assert_array_equal(res.tensor("c").grads["custom"], np.ones(200))


def test_parameters_seeded_identically_across_frameworks(engine, examples_dir):
    torch_w = run(engine, examples_dir / "tutorial_torch.py", "MulLayer", "torch").tensor("weights")
    tf_w = run(engine, examples_dir / "tutorial_tf.py", "MulLayer", "tf").tensor("weights")
    np.testing.assert_array_equal(torch_w.value, tf_w.value)
    np.testing.assert_allclose(torch_w.grads["custom"], tf_w.grads["custom"], rtol=1e-6)


def test_mlp_graph_reaches_weights_upstream_of_the_op(engine, examples_dir):
    s = FAST.with_(graph="mlp", shape=(16,))
    res = run(engine, examples_dir / "tutorial_torch.py", "RoundSTE", "torch", s)
    names = [t.name for t in res.tensors]
    for name in ("x", "w1", "b1", "h", "out", "w2", "b2", "y"):
        assert name in names
    w1 = res.tensor("w1")
    assert w1.shape == (16, 16)
    assert np.abs(w1.grads["custom"]).sum() > 0  # the STE passes gradient to w1
    np.testing.assert_array_equal(w1.grads["default"], np.zeros((16, 16)))  # round blocks it


def test_numeric_reference_full_and_projected(engine, examples_dir):
    small = run(engine, examples_dir / "tutorial_torch.py", "MulWeights", "torch", RunSettings())
    x = small.tensor("x")
    assert x.numeric.method == "full"
    np.testing.assert_allclose(x.grads["numeric"], small.tensor("weights").value, atol=1e-6)
    big = run(
        engine, examples_dir / "tutorial_torch.py", "RoundSTE", "torch", RunSettings(shape=(2000,))
    )
    bx = big.tensor("x")
    assert "numeric" not in bx.grads and bx.numeric.method == "projection"
    proj = bx.numeric.projections
    np.testing.assert_allclose(proj["numeric"], proj["default"], atol=1e-6)  # both zero
    assert np.abs(proj["custom"] - proj["numeric"]).max() > 0.1


def test_nan_kept_where_default_really_gives_nan(engine, corpus_dir):
    for path, fw in [
        (corpus_dir / "ok" / "nan_default_torch.py", "torch"),
        (corpus_dir / "ok" / "nan_default_tf.py", "tf"),
    ]:
        catalogs = engine.load([path])
        [op] = [o for c in catalogs for o in c.ops]
        res = run(engine, path, op.qualname, fw, RunSettings())
        x = res.tensor("x")
        expect = np.array([-1, -1, np.nan, 1, 1])
        np.testing.assert_array_equal(x.grads["custom"], expect)
        np.testing.assert_array_equal(x.grads["default"], expect)
        np.testing.assert_allclose(x.grads["numeric"], [-1, -1, 0, 1, 1], atol=1e-6)


def test_detached_forward_has_no_default_gradient(engine, write_module):
    path = write_module(
        "detached.py",
        """
        import torch
        class Detached(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return torch.from_numpy(x.detach().numpy() * 2)
            @staticmethod
            def backward(ctx, g):
                return 2 * g
    """,
    )
    x = run(engine, path, "Detached", "torch").tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], np.full(200, 2.0))
    assert "default" not in x.grads and "no gradient path" in x.absent["default"]


def test_setup_context_style_and_upstream_const(engine, corpus_dir):
    path = corpus_dir / "ok" / "ste_setup_context_torch.py"
    [op] = [o for c in engine.load([path]) for o in c.ops]
    res = run(engine, path, op.qualname, "torch", FAST.with_(upstream="const:0.5"))
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], np.full(200, 0.5))
    np.testing.assert_array_equal(x.grads["default"], np.zeros(200))


def test_random_upstream_and_float64(engine, examples_dir):
    s = FAST.with_(upstream="random", dtype="float64", shape=(4, 5), seed=7)
    t = run(engine, examples_dir / "tutorial_torch.py", "RoundSTE", "torch", s).tensor("x")
    f = run(engine, examples_dir / "tutorial_tf.py", "round_ste", "tf", s).tensor("x")
    assert t.grads["custom"].dtype == np.float64 and t.shape == (4, 5)
    expect = np.random.default_rng([7, __import__("zlib").crc32(b"upstream:out")]).standard_normal(
        (4, 5)
    )
    np.testing.assert_array_equal(t.grads["custom"], expect)
    np.testing.assert_array_equal(f.grads["custom"], expect)


def test_layer_parameters_get_gradients_in_both_frameworks(engine, corpus_dir):
    for path, fw in [
        (corpus_dir / "ok" / "layer_with_params_torch.py", "torch"),
        (corpus_dir / "ok" / "layer_with_params_tf.py", "tf"),
    ]:
        ops = [o for c in engine.load([path]) for o in c.ops if o.kind in ("module", "layer")]
        res = run(engine, path, ops[0].qualname, fw)
        bias = res.tensor("bias")
        assert bias is not None and bias.role == "param"
        np.testing.assert_array_equal(bias.grads["custom"], np.ones(200))


def test_devices_lists_cpu_and_explains_missing_gpu(engine):
    devices = engine.devices()
    torch_names = {d["name"]: d for d in devices["torch"]["devices"]}
    tf_names = {d["name"]: d for d in devices["tf"]["devices"]}
    assert torch_names["cpu"]["available"] and tf_names["/CPU:0"]["available"]
    for d in list(torch_names.values()) + list(tf_names.values()):
        assert d["available"] or d["reason"]


def test_unavailable_device_is_a_clear_error(engine, examples_dir):
    devices = engine.devices()
    if any(d["name"].startswith("cuda") and d["available"] for d in devices["torch"]["devices"]):
        pytest.skip("a GPU is present")
    [res] = engine.run(
        [
            RunRequest(
                str(examples_dir / "tutorial_torch.py"),
                "RoundSTE",
                "torch",
                FAST.with_(device="cuda:0"),
            )
        ]
    )
    assert res.status == "error" and "not available" in res.error.message


@pytest.mark.gpu
def test_gpu_runs_match_cpu(engine, examples_dir):
    for fw, qual, dev in [("torch", "MulWeights", "cuda:0"), ("tf", "mul_weights", "/GPU:0")]:
        path = examples_dir / ("tutorial_torch.py" if fw == "torch" else "tutorial_tf.py")
        cpu = run(engine, path, qual, fw, FAST.with_(device="cpu"))
        gpu = run(engine, path, qual, fw, FAST.with_(device=dev))
        assert gpu.device.lower().replace("/", "").startswith(("cuda", "gpu"))
        np.testing.assert_allclose(
            gpu.tensor("x").grads["custom"], cpu.tensor("x").grads["custom"], rtol=1e-5
        )


def test_partial_results_come_first_without_numeric(engine, examples_dir):
    reqs = [
        RunRequest(str(examples_dir / "tutorial_torch.py"), q, "torch", RunSettings())
        for q in ("RoundSTE", "MulWeights")
    ]
    events = []
    results = engine.run(
        reqs,
        on_result=lambda r: events.append(("full", r)),
        on_partial=lambda r: events.append(("partial", r)),
    )
    kinds = [k for k, _ in events]
    assert kinds == ["partial", "partial", "full", "full"]
    for kind, r in events:
        x = r.tensor("x")
        assert r.partial == (kind == "partial")
        assert ("numeric" in x.grads) == (kind == "full")
        np.testing.assert_array_equal(
            x.grads["custom"],
            next(f for f in results if f.request.qualname == r.request.qualname)
            .tensor("x")
            .grads["custom"],
        )


def test_tf_numeric_compiled_and_eager_fallback_agree(engine, write_module):
    """The numeric reference runs compiled in one call where it can, one forward at a time where
    the forward needs eager TensorFlow (numpy inside); both give the true derivative."""
    path = write_module(
        "tanh_ops_tf.py",
        """
        import numpy as np
        import tensorflow as tf

        @tf.custom_gradient
        def tanh_graph(x):
            y = tf.tanh(x)
            def grad(dy):
                return dy * (1 - y * y)
            return y, grad

        @tf.custom_gradient
        def tanh_numpy(x):
            y = tf.constant(np.tanh(x.numpy()))   # eager only
            def grad(dy):
                return dy * (1 - y * y)
            return y, grad
    """,
    )
    reqs = [
        RunRequest(path, q, "tf", RunSettings(shape=(50,))) for q in ("tanh_graph", "tanh_numpy")
    ]
    graph_res, numpy_res = engine.run(reqs)
    for res in (graph_res, numpy_res):
        x = res.tensor("x")
        np.testing.assert_allclose(
            x.grads["numeric"], 1 - np.tanh(x.value.astype(np.float64)) ** 2, atol=1e-6
        )
        np.testing.assert_allclose(x.grads["custom"], x.grads["numeric"], atol=1e-5)
    assert "default" not in numpy_res.tensor("x").grads


def test_op_that_does_not_fit_the_mlp_graph_says_so(engine, write_module):
    path = write_module(
        "reduce_torch.py",
        """
        import torch
        class Total(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.sum()
            @staticmethod
            def backward(ctx, g):
                return g * torch.ones(200)
    """,
    )
    [res] = engine.run([RunRequest(path, "Total", "torch", FAST.with_(graph="mlp", shape=(8,)))])
    assert res.status == "error" and res.error.type == "GraphMismatch"
    assert "use the op or seed graph" in res.error.message and res.error.where.endswith(":3")


def test_framework_messages_lose_colour_codes_and_node_names():
    from gradviz.backends.user_code import _strip_framework_noise

    raw = (
        "Exception encountered when calling L.call().\n\x1b[1m{{function_node __wrapped__Mul_device_"
        "/job:localhost/replica:0/task:0/device:CPU:0}} Incompatible shapes: [16] vs. [200] "
        "[Op:Mul] name: \x1b[0m"
    )
    text = _strip_framework_noise(raw)
    assert "\x1b" not in text and "function_node" not in text and "[Op:" not in text
    assert "Incompatible shapes: [16] vs. [200]" in text


def test_numeric_runs_at_background_priority_then_restores(monkeypatch):
    """Every thread of the worker is lowered (TF's own pool does much of a TF forward), and
    each gets its priority back, a thread started meanwhile that of the caller."""
    import os

    from gradviz.backends import priority, runner

    seen = []
    monkeypatch.setattr(os, "setpriority", lambda which, who, prio: seen.append((who, prio)))
    monkeypatch.setattr(os, "getpriority", lambda which, who: {0: 0, 41: 0, 42: 12}[who])
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    threads = [0, 41, 42]
    monkeypatch.setattr(priority, "thread_ids", lambda: list(threads))
    with runner._background_priority():
        assert seen == [(0, 10), (41, 10)]  # 42 is below that priority already
        threads.append(43)  # started meanwhile, at the low value
    assert seen[2:] == [(0, 0), (41, 0), (42, 12), (43, 0)]


def test_background_priority_lowers_and_restores_real_threads():
    """Real threads of this process (root or RLIMIT_NICE permitting, as in the worker)."""
    import os
    import threading

    from gradviz.backends.priority import background_priority

    if os.getpriority(os.PRIO_PROCESS, 0) >= 10:
        pytest.skip("this process already runs at low priority")
    ready, done, tid = threading.Event(), threading.Event(), []

    def other():
        tid.append(threading.get_native_id())
        ready.set()
        done.wait(10)

    t = threading.Thread(target=other)
    t.start()
    ready.wait(10)
    before = os.getpriority(os.PRIO_PROCESS, tid[0])
    try:
        with background_priority():
            inside = os.getpriority(os.PRIO_PROCESS, tid[0])
        after = os.getpriority(os.PRIO_PROCESS, tid[0])
    finally:
        done.set()
        t.join()
    if os.geteuid() != 0 and inside == before:
        pytest.skip("lowering needs root or RLIMIT_NICE here")
    assert (inside, after) == (10, before)
    assert os.getpriority(os.PRIO_PROCESS, 0) == before


def test_gradviz_leaves_no_warnings_of_its_own_in_the_user_log(engine, examples_dir):
    """Warnings captured with an op are the user's: gradviz's own (an unclosed file while it
    locates the backward's return) must not show up among them."""
    [res] = engine.run(
        [RunRequest(str(examples_dir / "traps_torch.py"), "TooManyGrads", "torch", FAST)]
    )
    src = (examples_dir / "traps_torch.py").read_text().splitlines()
    line = next(i for i, t in enumerate(src, 1) if "return grad_output * 2, grad_output" in t)
    assert res.status == "error" and res.error.where.endswith(f":{line}")
    assert res.warnings == ()
