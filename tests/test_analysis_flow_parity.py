"""The analysis of an op carries its gradient flow (issue 27): the rows every face reads (the
CLI's table and --json, the window's flow chart and export), with values known for the corpus's
flow ops whatever the weights."""

from dataclasses import replace

import numpy as np
import pytest

from gradviz.app.analysis import analyze
from gradviz.flow import dies_at, flow_of
from gradviz.model import RunRequest, RunSettings

DEPTH = 3
STACK = RunSettings(graph="stack", depth=DEPTH, shape=(16,), modes=("default", "custom"))
FLOW_OPS = {
    ("torch", "reverse_grad"): "ReverseGrad",
    ("tf", "reverse_grad"): "reverse_grad",
    ("torch", "sign_ste"): "SignSTE",
    ("tf", "sign_ste"): "sign_ste",
}
LAMBDA = 0.5  # reverse_grad's, as in tests/corpus/flow


@pytest.fixture(scope="module")
def runs(engine, corpus_dir):
    """{(framework, op): RunResult} of the flow ops in both frameworks, one batch."""
    files = {"torch": "flow_torch.py", "tf": "flow_tf.py"}
    reqs = [
        RunRequest(str(corpus_dir / "flow" / files[fw]), qualname, fw, STACK)
        for (fw, _), qualname in FLOW_OPS.items()
    ]
    results = engine.run(reqs)
    for r in results:
        assert r.status == "ok", r.error
    return dict(zip(FLOW_OPS, results))


@pytest.mark.parametrize("fw", ["torch", "tf"])
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


@pytest.mark.parametrize("fw", ["torch", "tf"])
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
