"""The analysis of an op carries its gradient flow (issue 27): the rows every face reads (the
CLI's table and --json, the window's flow chart and export), with values known for the corpus's
flow ops whatever the weights."""

from dataclasses import replace

import numpy as np
import pytest

from gradviz.app.analysis import analyze
from gradviz.flow import dies_at, flow_of
from gradviz.model import RunRequest, RunSettings
from gradviz.vocab import Framework

DEPTH = 3
STACK = RunSettings(graph="stack", depth=DEPTH, shape=(16,), modes=("default", "custom"))
FLOW_OPS = {
    ("torch", "reverse_grad"): "ReverseGrad",
    ("tf", "reverse_grad"): "reverse_grad",
    ("torch", "sign_ste"): "SignSTE",
    ("tf", "sign_ste"): "sign_ste",
}
if Framework.JAX.installed:
    FLOW_OPS.update({("jax", "reverse_grad"): "reverse_grad", ("jax", "sign_ste"): "sign_ste"})
FRAMEWORKS = [
    "torch",
    "tf",
    pytest.param(
        "jax", marks=pytest.mark.skipif(not Framework.JAX.installed, reason="jax is not installed")
    ),
]
LAMBDA = 0.5  # reverse_grad's, as in tests/corpus/flow


@pytest.fixture(scope="module")
def runs(engine, corpus_dir):
    """{(framework, op): RunResult} of the flow ops in every framework, one batch."""
    files = {"torch": "flow_torch.py", "tf": "flow_tf.py", "jax": "flow_jax.py"}
    reqs = [
        RunRequest(str(corpus_dir / "flow" / files[fw]), qualname, fw, STACK)
        for (fw, _), qualname in FLOW_OPS.items()
    ]
    results = engine.run(reqs)
    for r in results:
        assert r.status == "ok", r.error
    return dict(zip(FLOW_OPS, results))


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_analysis_carries_the_flow_of_a_gradient_reversal(runs, fw):
    """Identity forward, custom = (-lambda) x the upstream per layer: at h{i} the custom norm
    is lambda^(N-i+1) times the default one, exactly (lambda is a power of two)."""
    a = analyze(runs[(fw, "reverse_grad")], curves=False)
    assert [(row.layer, row.tensor) for row in a.flow] == [(i, f"h{i}") for i in (1, 2, 3)]
    for row in a.flow:
        assert row.norm["default"] > 0
        assert row.norm["custom"] == LAMBDA ** (DEPTH - row.layer + 1) * row.norm["default"]
        assert row.absent == {}
    assert a.flow == tuple(flow_of(a.result))


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_analysis_flow_of_sign_ste_dies_in_default_only_and_checks_keep_it(runs, fw):
    res = runs[(fw, "sign_ste")]
    a = analyze(res, curves=False)
    assert [row.norm["default"] for row in a.flow] == [0.0] * DEPTH
    for row in a.flow:
        h = res.tensor(row.tensor)
        want = float(np.sqrt(np.sum(np.square(h.grads["custom"].astype(np.float64)))))
        assert row.norm["custom"] == want > 0
    assert dies_at(list(a.flow), "default") == DEPTH and dies_at(list(a.flow), "custom") is None
    # the contract checks arriving later change the findings, never the flow
    assert a.with_checks(res).flow == a.flow


def test_a_partial_analysis_as_asked_says_the_numeric_norm_is_still_to_come(runs):
    """The window stores a partial result under the request asked (numeric included): its flow
    rows then name the numeric mode as not computed, never as a dead gradient."""
    res = runs[("torch", "sign_ste")]
    a = analyze(res, curves=False)
    asked = replace(res.request, settings=STACK.with_(modes=("default", "custom", "numeric")))
    held = a.as_asked(asked)
    assert held.result.request is asked
    assert [row.norm["numeric"] for row in held.flow] == [None] * DEPTH
    assert all(row.absent["numeric"].startswith("not computed") for row in held.flow)
    assert dies_at(list(held.flow), "numeric") is None
    assert [row.norm["custom"] for row in held.flow] == [row.norm["custom"] for row in a.flow]


# --- parity ----------------------------------------------------------------------------------
OP = RunSettings(modes=("default", "custom"))


@pytest.fixture(scope="module")
def twins(engine, examples_dir, corpus_dir):
    """The straight-through round of the tutorial in torch and tf, and the corpus's cube in
    torch, tf and jax (cube_off in torch and jax), one batch, named by their pairs."""
    from gradviz.vocab import Framework

    reqs = [
        RunRequest(str(examples_dir / "tutorial_torch.py"), "RoundSTE", "torch", OP),
        RunRequest(str(examples_dir / "tutorial_tf.py"), "round_ste", "tf", OP),
    ]
    if Framework.JAX.installed:
        jax = corpus_dir / "jax"
        reqs += [
            RunRequest(str(jax / "twins_torch.py"), "CubeTorch", "torch", OP),
            RunRequest(str(jax / "twins_tf.py"), "cube_tf", "tf", OP),
            RunRequest(str(jax / "twins_jax.py"), "cube_jax", "jax", OP),
            RunRequest(str(jax / "twins_torch.py"), "CubeOffTorch", "torch", OP),
            RunRequest(str(jax / "twins_jax.py"), "cube_off_jax", "jax", OP),
        ]
    results = engine.run(reqs)
    for r in results:
        assert r.status == "ok", r.error
    return results


def test_both_analyses_of_a_straight_through_twin_hold_its_parity(twins):
    """STE round: the custom gradient is the upstream in both frameworks, so torch and tf give
    the very same numbers; TF's default is None (no gradient for tf.round), torch's zeros."""
    from gradviz.app.parity_rows import parity_in_order, with_parity

    torch_ste, tf_ste = twins[:2]
    assert torch_ste.name == tf_ste.name == "round_ste"
    x_torch, x_tf = torch_ste.tensor("x").grads["custom"], tf_ste.tensor("x").grads["custom"]
    np.testing.assert_array_equal(x_torch, x_tf)
    np.testing.assert_array_equal(x_torch, torch_ste.tensor("out").grads["custom"])
    a_torch, a_tf = with_parity([analyze(r, curves=False) for r in (torch_ste, tf_ste)])
    got = [(p.tensor, p.mode, p.verdict, p.max_abs_err) for p in a_torch.parity]
    assert got == [
        ("x", "value", "match", 0.0),
        ("x", "default", "differs", None),
        ("x", "custom", "match", 0.0),
        ("out", "value", "match", 0.0),
        ("out", "default", "match", 0.0),
        ("out", "custom", "match", 0.0),
    ]
    assert all(p.op == "round_ste" and p.frameworks == ("torch", "tf") for p in a_torch.parity)
    assert "tf: no gradient" in a_torch.parity[1].note and "torch: zeros" in a_torch.parity[1].note
    assert a_tf.parity == a_torch.parity
    # the checks arriving keep the rows; the report's list holds each row once
    assert a_torch.with_checks(torch_ste).parity == a_torch.parity
    assert parity_in_order([a_torch, a_tf]) == list(a_torch.parity)


def test_an_op_without_a_twin_holds_no_parity_and_an_unpaired_one_none(twins):
    from gradviz.app.parity_rows import with_parity

    alone = analyze(twins[0], curves=False)
    assert alone.parity is None  # not paired yet
    assert with_parity([alone])[0].parity == ()


def test_three_frameworks_each_hold_their_pairs_and_the_report_order_is_kept(twins):
    """cube in torch, tf and jax, cube_off in torch and jax: each analysis holds the rows that
    name its framework, and the rows again, each once, are compare.parity's list, in order."""
    from gradviz.app.parity_rows import parity_in_order, with_parity
    from gradviz.compare import parity
    from gradviz.vocab import Framework

    if not Framework.JAX.installed:
        pytest.skip("jax is not installed")
    analyses = with_parity([analyze(r, curves=False) for r in twins])
    pairs = {
        (a.result.name, a.result.framework): {tuple(p.frameworks) for p in a.parity}
        for a in analyses
    }
    assert pairs == {
        ("round_ste", "torch"): {("torch", "tf")},
        ("round_ste", "tf"): {("torch", "tf")},
        ("cube", "torch"): {("torch", "tf"), ("torch", "jax")},
        ("cube", "tf"): {("torch", "tf"), ("tf", "jax")},
        ("cube", "jax"): {("torch", "jax"), ("tf", "jax")},
        ("cube_off", "torch"): {("torch", "jax")},
        ("cube_off", "jax"): {("torch", "jax")},
    }
    # the rows are about the op: each in exactly the analyses of its two frameworks
    for a in analyses:
        assert all(a.result.framework in p.frameworks and p.op == a.result.name for p in a.parity)
    # in any order of the analyses' results, the rebuilt list is what compare.parity makes
    for order in (analyses, analyses[::-1], analyses[2:] + analyses[:2]):
        results = [a.result for a in order]
        assert parity_in_order(with_parity(order)) == parity(results)
    off = {(p.tensor, p.mode): (p.verdict, p.max_abs_err) for p in analyses[5].parity}
    assert off[("x", "custom")][0] == "differs" and off[("x", "value")] == ("match", 0.0)
