"""The `stack` graph in every framework (JAX's where it is installed): ops whose flow through
depth is known whatever the weights (tests/corpus/flow/), the per-layer `flow` norms, and an op
that cannot be stacked."""

import numpy as np
import pytest

from gradviz.flow import dies_at, flow_of
from gradviz.model import RunRequest, RunSettings
from gradviz.vocab import Framework

DEPTH = 3
STACK = RunSettings(graph="stack", depth=DEPTH, shape=(16,))
FILES = {"torch": "flow_torch.py", "tf": "flow_tf.py", "jax": "flow_jax.py"}
QUALNAMES = {
    ("torch", "reverse_grad"): "ReverseGrad",
    ("tf", "reverse_grad"): "reverse_grad",
    ("torch", "sign_ste"): "SignSTE",
    ("tf", "sign_ste"): "sign_ste",
    ("torch", "smooth_tanh"): "SmoothTanh",
    ("tf", "smooth_tanh"): "smooth_tanh",
}
if Framework.JAX.installed:
    QUALNAMES.update({("jax", op): op for op in ("reverse_grad", "sign_ste", "smooth_tanh")})
NO_JAX = pytest.mark.skipif(not Framework.JAX.installed, reason="jax is not installed")
FRAMEWORKS = ["torch", "tf", pytest.param("jax", marks=NO_JAX)]
LAMBDA = 0.5  # as in the corpus files


@pytest.fixture(scope="module")
def runs(engine, corpus_dir):
    """Every flow op in every framework, one batch: {(framework, op): RunResult}."""
    keys = list(QUALNAMES)
    reqs = [
        RunRequest(str(corpus_dir / "flow" / FILES[fw]), QUALNAMES[(fw, op)], fw, STACK)
        for fw, op in keys
    ]
    results = engine.run(reqs)
    for r in results:
        assert r.status == "ok", r.error
    return dict(zip(keys, results))


def grad(res, name, mode):
    return res.tensor(name).grads[mode]


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_stack_records_every_tensor_with_seeded_weights(runs, fw):
    res = runs[(fw, "smooth_tanh")]
    names = [t.name for t in res.tensors]
    expected = (
        ["x"]
        + [f"{p}{i}" for i in range(1, DEPTH + 1) for p in "wb"]
        + [f"{p}{i}" for i in range(1, DEPTH + 1) for p in "ho"]
    )
    assert names == expected
    assert res.tensor(f"o{DEPTH}").role == "output" and res.tensor("h1").role == "intermediate"
    assert res.tensor("w2").shape == (16, 16) and res.tensor("b2").shape == (16,)
    for t in res.tensors:
        assert set(t.grads) == {"default", "custom", "numeric"}, t.name
    # the forward really is the stack: h{i} = o{i-1} @ w{i} + b{i}, o{i} = tanh(h{i})
    o = res.tensor("x").value.astype(np.float64)
    for i in range(1, DEPTH + 1):
        h = o @ res.tensor(f"w{i}").value + res.tensor(f"b{i}").value
        np.testing.assert_allclose(res.tensor(f"h{i}").value, h, rtol=1e-5, atol=1e-5)
        o = np.tanh(h)


def test_every_framework_gets_the_same_weights_and_inputs(runs):
    t = runs[("torch", "sign_ste")]
    others = [r for (fw, op), r in runs.items() if op == "sign_ste" and fw != "torch"]
    assert len(others) == len(FILES) - 1 if Framework.JAX.installed else len(others) == 1
    for other in others:
        for name in ["x"] + [f"{p}{i}" for i in range(1, DEPTH + 1) for p in "wb"]:
            np.testing.assert_array_equal(t.tensor(name).value, other.tensor(name).value)


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_gradient_reversal_scales_by_minus_lambda_per_layer(runs, fw):
    """Identity forward: custom at h{i} = (-lambda)^(N-i+1) x default, element by element.
    lambda = 0.5 is a power of two, so the scaling is exact in floating point."""
    res = runs[(fw, "reverse_grad")]
    for i in range(1, DEPTH + 1):
        default, custom = grad(res, f"h{i}", "default"), grad(res, f"h{i}", "custom")
        assert np.abs(default).min() > 0
        np.testing.assert_array_equal(custom, (-LAMBDA) ** (DEPTH - i + 1) * default)
        np.testing.assert_allclose(grad(res, f"h{i}", "numeric"), default, rtol=1e-3, atol=1e-6)
    flow = flow_of(res)
    for row in flow:
        k = DEPTH - row.layer + 1
        assert row.norm["custom"] == pytest.approx(LAMBDA**k * row.norm["default"], rel=1e-6)
    assert dies_at(flow, "custom") is None and dies_at(flow, "default") is None


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_sign_ste_keeps_gradient_alive_where_autodiff_kills_it(runs, fw):
    """sign's derivative is zero: the default gradient is zero at every layer and weight. The
    clipped STE passes g * (|h| <= 1): from the upstream ones at the top, then back through
    each dense layer; derived here from the recorded h{i} and w{i}."""
    res = runs[(fw, "sign_ste")]
    for t in res.tensors:
        if t.name != f"o{DEPTH}":
            np.testing.assert_array_equal(t.grads["default"], np.zeros(t.shape), err_msg=t.name)
    h_top = res.tensor(f"h{DEPTH}").value
    top = grad(res, f"h{DEPTH}", "custom")
    np.testing.assert_array_equal(top == 0, np.abs(h_top) > 1)
    np.testing.assert_array_equal(top[np.abs(h_top) <= 1], 1.0)
    g = np.ones(16)  # upstream ones at o_N
    for i in range(DEPTH, 0, -1):
        h = res.tensor(f"h{i}").value.astype(np.float64)
        g_h = g * (np.abs(h) <= 1)
        np.testing.assert_allclose(grad(res, f"h{i}", "custom"), g_h, rtol=1e-5, atol=1e-6)
        g = g_h @ res.tensor(f"w{i}").value.astype(np.float64).T
    flow = flow_of(res)
    assert all(row.norm["default"] == 0.0 for row in flow)
    assert all(row.norm["custom"] > 0 for row in flow)
    assert dies_at(flow, "default") == DEPTH and dies_at(flow, "custom") is None


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_correct_smooth_op_flows_like_default_and_numeric(runs, fw):
    res = runs[(fw, "smooth_tanh")]
    for t in res.tensors:
        np.testing.assert_allclose(t.grads["custom"], t.grads["default"], rtol=1e-5, atol=1e-6)
    flow = flow_of(res)
    assert [row.layer for row in flow] == list(range(1, DEPTH + 1))
    for row in flow:
        n = row.norm
        assert n["default"] > 0 and n["custom"] == pytest.approx(n["default"], rel=1e-5)
        assert n["numeric"] == pytest.approx(n["default"], rel=0.01)


def test_an_op_that_changes_the_shape_cannot_be_stacked(engine, corpus_dir):
    [res] = engine.run(
        [
            RunRequest(
                str(corpus_dir / "flow" / "flow_torch.py"),
                "Total",
                "torch",
                STACK.with_(shape=(8,), modes=("custom", "default")),
            )
        ]
    )
    assert res.status == "error" and res.error.type == "GraphMismatch"
    assert "stack graph needs an op that keeps the shape" in res.error.message
    assert res.error.where.endswith("flow_torch.py:54")


def test_large_tensors_give_no_numeric_norm_and_no_false_death(engine, corpus_dir):
    """Above 256 elements the numeric reference is a projection: its flow norm is absent and
    that absence is not a dead gradient."""
    s = STACK.with_(shape=(300,), depth=2)
    [res] = engine.run(
        [RunRequest(str(corpus_dir / "flow" / "flow_torch.py"), "SmoothTanh", "torch", s)]
    )
    flow = flow_of(res)
    assert [row.norm["numeric"] for row in flow] == [None, None]
    assert flow[0].absent["numeric"].startswith("not computed")
    assert dies_at(flow, "numeric") is None and dies_at(flow, "custom") is None


def test_cli_refuses_a_depth_out_of_range(capsys):
    from gradviz.cli import main

    for depth in ("0", "65", "-3"):
        assert main(["run", "--graph", "stack", "--depth", depth]) == 2
        assert "--depth" in capsys.readouterr().err


def test_cli_stack_run_prints_flow_and_writes_it_to_json(tmp_path, corpus_dir):
    from cli_runs import gradviz

    path = corpus_dir / "flow" / "flow_torch.py"
    proc = gradviz(
        "run",
        path,
        "--framework",
        "torch",
        "--op",
        "sign_ste",
        "--graph",
        "stack",
        "--depth",
        "2",
        "--shape",
        "8",
        "--json",
        tmp_path / "r.json",
        "--npz",
        tmp_path / "r.npz",
        "--plot",
        tmp_path / "grid.svg",
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    head = next(i for i, t in enumerate(lines) if t.startswith("gradient flow"))
    assert lines[head + 1].split() == ["op", "fw", "layer", "default", "custom", "numeric"]
    assert [t.split()[:4] for t in lines[head + 3 : head + 5]] == [
        ["sign_ste", "torch", "1", "0"],
        ["sign_ste", "torch", "2", "0"],
    ]
    assert "the default and numeric gradient dies at layer 2" in proc.stdout
    flow_svg = (tmp_path / "grid.flow-sign_ste.svg").read_text()
    assert "PyTorch · sign_ste" in flow_svg and "gradient dies" in flow_svg
    assert (tmp_path / "grid.svg").stat().st_size > 0
    import json

    report = json.loads((tmp_path / "r.json").read_text())
    assert report["settings"]["graph"] == "stack" and report["settings"]["depth"] == 2
    [op] = report["ops"]
    assert [(r["layer"], r["tensor"]) for r in op["flow"]] == [(1, "h1"), (2, "h2")]
    with np.load(tmp_path / "r.npz") as npz:
        keys = set(npz.files)
        for i, row in enumerate(op["flow"], 1):
            assert row["norm"]["default"] == 0.0
            assert row["norm"]["custom"] == pytest.approx(
                float(np.linalg.norm(npz[f"torch/sign_ste/custom/h{i}"].astype(np.float64)))
            )
    assert {
        f"torch/sign_ste/{m}/{n}"
        for m in ("default", "custom", "numeric")
        for n in ("x", "w1", "b1", "h1", "o1", "w2", "b2", "h2", "o2")
    } <= keys


def test_numeric_reference_does_the_flow_tensors_first(monkeypatch):
    """The stack graph's h{i} are done before its time budget can run out on the weights."""
    import inspect

    from gradviz.backends import numeric
    from gradviz.backends.graphs import Graph, Leaf, plan_args
    from gradviz.backends.stack_graph import stack_graph

    def op(x):
        return x

    plans = plan_args(list(inspect.signature(op).parameters.values()), {}, STACK)
    assert stack_graph(STACK, plans).numeric_first == ("h3", "h2", "h1")

    class Adapter:
        def evaluate(self, graph, built, leaves, inject, device):
            return float(np.sum(leaves["a"] ** 2) + 3 * np.sum(inject.get("c", 0.0)))

    class Built:
        def param_names(self):
            return []

    class Clock:  # every reading is 20 s later than the last
        now = 0.0

        def perf_counter(self):
            Clock.now += 20.0
            return Clock.now

    monkeypatch.setattr(numeric, "time", Clock())
    monkeypatch.setattr(numeric, "TIME_BUDGET_S", 90.0)  # start at 20 s: deadline at 110 s
    graph = Graph([Leaf("a", "input", np.ones(2))], None, numeric_first=("c",))
    tensors = {n: {"value": np.ones(2), "grads": {}} for n in ("a", "c")}
    out = numeric.compute(Adapter(), graph, Built(), "cpu", tensors)
    np.testing.assert_allclose(out["c"]["grad"], [3.0, 3.0], rtol=1e-6)
    assert out["a"]["grad"] is None and "budget" in out["a"]["why"]
    # one tensor whose elements outlast the budget stops inside it (readings 60, 80, 100, 120 s)
    Clock.now = 0.0
    tensors = {"c": {"value": np.ones(5), "grads": {}}}
    out = numeric.compute(Adapter(), graph, Built(), "cpu", tensors)
    assert out["c"]["grad"] is None and out["c"]["info"].method == "skipped"


@NO_JAX
def test_a_jax_reversal_on_the_mlp_graph_scales_by_minus_lambda_below_the_op(engine, corpus_dir):
    """mlp: x -> h = x @ w1 + b1 -> out = op(h) -> y = out @ w2 + b2. Above the op the gradients
    agree exactly; at h and below it custom = -lambda x default, element by element (a power of
    two commutes with every rounding of the dense layer's products)."""
    s = RunSettings(graph="mlp", shape=(16,), modes=("default", "custom"))
    [res] = engine.run(
        [RunRequest(str(corpus_dir / "flow" / "flow_jax.py"), "reverse_grad", "jax", s)]
    )
    assert res.status == "ok", res.error
    for name in ("out", "w2", "b2", "y"):
        np.testing.assert_array_equal(grad(res, name, "custom"), grad(res, name, "default"))
    for name in ("h", "x", "w1", "b1"):
        default = grad(res, name, "default")
        assert np.abs(default).max() > 0, name
        np.testing.assert_array_equal(grad(res, name, "custom"), -LAMBDA * default, err_msg=name)


@NO_JAX
def test_cli_stack_run_of_a_jax_op_prints_its_flow_table(tmp_path, corpus_dir):
    import json

    from cli_runs import gradviz

    proc = gradviz(
        "run",
        corpus_dir / "flow" / "flow_jax.py",
        "--framework",
        "jax",
        "--op",
        "reverse_grad",
        "--graph",
        "stack",
        "--depth",
        "2",
        "--shape",
        "8",
        "--modes",
        "default,custom",
        "--json",
        tmp_path / "r.json",
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    head = next(i for i, t in enumerate(lines) if t.startswith("gradient flow"))
    assert lines[head + 1].split() == ["op", "fw", "layer", "default", "custom"]
    rows = [t.split() for t in lines[head + 3 : head + 5]]
    assert [r[:3] for r in rows] == [["reverse_grad", "jax", "1"], ["reverse_grad", "jax", "2"]]
    [op] = json.loads((tmp_path / "r.json").read_text())["ops"]
    assert op["framework"] == "jax"
    flow = {r["layer"]: r["norm"] for r in op["flow"]}
    assert sorted(flow) == [1, 2]
    for layer, norm in flow.items():  # h{i}: (-lambda)^(N-i+1) x default, so its norm exactly
        assert norm["default"] > 0
        assert norm["custom"] == pytest.approx(LAMBDA ** (2 - layer + 1) * norm["default"], 1e-6)
    for r, layer in zip(rows, (1, 2)):  # the table prints the JSON's numbers
        assert float(r[3]) == pytest.approx(flow[layer]["default"], rel=5e-3)
        assert float(r[4]) == pytest.approx(flow[layer]["custom"], rel=5e-3)
