"""A run's passes are data (issue 27 item 4): engine.passes.plan picks them, Engine.run_passes runs
them and yields typed events, the same for the CLI (one FULL pass) and the window (QUICK ->
NUMERIC -> CHECKS)."""

import numpy as np

from gradviz.engine.passes import (
    CHECKS_PASS,
    FULL_PASS,
    NUMERIC_PASS,
    QUICK_PASS,
    ChecksArrived,
    OpStarted,
    ResultArrived,
    plan,
)
from gradviz.model import RunRequest, RunSettings
from gradviz.vocab import CheckStatus

PLAIN = RunSettings(shape=(8,), modes=("custom", "default"))
NUMERIC = RunSettings(shape=(8,))


def _req(examples_dir, qual, settings):
    return RunRequest(str(examples_dir / "tutorial_torch.py"), qual, "torch", settings)


def test_the_plan_of_the_cli_and_of_the_window(examples_dir):
    plain, numeric = (
        _req(examples_dir, "MulWeights", PLAIN),
        _req(examples_dir, "MulWeights", NUMERIC),
    )
    checked = _req(examples_dir, "MulWeights", NUMERIC.with_(checks=("double_backward",)))
    assert plan([numeric, checked], progressive=False, checks_apart=False) == (FULL_PASS,)
    assert plan([plain], progressive=True, checks_apart=True) == (FULL_PASS,)
    assert plan([plain, numeric], progressive=True, checks_apart=True) == (QUICK_PASS, NUMERIC_PASS)
    assert plan([plain, checked], progressive=True, checks_apart=True) == (
        QUICK_PASS,
        NUMERIC_PASS,
        CHECKS_PASS,
    )
    assert plan([checked], progressive=True, checks_apart=False) == (QUICK_PASS, NUMERIC_PASS)
    # what each asks its worker for an op
    assert "numeric" not in QUICK_PASS.asks(numeric).settings.modes
    assert not QUICK_PASS.takes(plain) and QUICK_PASS.takes(numeric)
    assert CHECKS_PASS.takes(checked) and not CHECKS_PASS.takes(numeric)
    assert CHECKS_PASS.asks(checked).settings.modes == ("default", "custom")  # MODES' order


def test_the_windows_passes_yield_each_ops_events_in_order(engine, examples_dir):
    """Per op: started, partial (no numeric), final (numeric), checks (merged into the final
    result returned); the final gradients are those of a one-pass run."""
    checks = ("double_backward",)
    reqs = [_req(examples_dir, q, NUMERIC.with_(checks=checks)) for q in ("RoundSTE", "MulWeights")]
    passes = plan(reqs, progressive=True, checks_apart=True)
    events = []
    results = engine.run_passes(reqs, passes, events.append)
    for req, res in zip(reqs, results):
        mine = [
            ev
            for ev in events
            if (ev.request if isinstance(ev, OpStarted) else ev.result.request).qualname
            == req.qualname
        ]
        kinds = [
            type(ev).__name__ + (":partial" if isinstance(ev, ResultArrived) and ev.partial else "")
            for ev in mine
        ]
        # its worker takes it in each of QUICK and NUMERIC (CHECKS starts nothing new)
        assert kinds == [
            "OpStarted",
            "ResultArrived:partial",
            "OpStarted",
            "ResultArrived",
            "ChecksArrived",
        ]
        partial, final, checked = (ev.result for ev in mine if not isinstance(ev, OpStarted))
        assert "numeric" not in partial.tensor("x").grads and "numeric" in final.tensor("x").grads
        assert isinstance(mine[-1], ChecksArrived) and checked is res
        assert [c.name for c in res.checks] == list(checks)
        assert res.checks[0].status in (CheckStatus.PASS, CheckStatus.FAIL)
        [one] = engine.run_passes(
            [RunRequest(req.file, req.qualname, "torch", req.settings.with_(checks=()))],
            (FULL_PASS,),
        )
        np.testing.assert_array_equal(
            res.tensor("x").grads["custom"], one.tensor("x").grads["custom"]
        )
        np.testing.assert_allclose(
            res.tensor("x").grads["numeric"], one.tensor("x").grads["numeric"]
        )
