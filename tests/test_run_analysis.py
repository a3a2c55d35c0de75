"""app.run_analysis: a window run's events analysed in one lane per framework (issue 27): each
op's partial, final and checks come out in that order, a final reuses its partial's work, and
the lane that completes a pair makes its parity, unless the run is being cancelled."""

import threading
from dataclasses import replace

from samples import ste_result

from gradviz.app.run_analysis import RunAnalysis
from gradviz.compare import parity
from gradviz.engine.passes import ChecksArrived, ResultArrived
from gradviz.model import OpKey


def _partial(full):
    return replace(
        full,
        partial=True,
        tensors=tuple(
            replace(t, grads={m: g for m, g in t.grads.items() if m != "numeric"})
            for t in full.tensors
        ),
    )


def _run(cancelled=lambda: False):
    fulls = [ste_result("torch"), ste_result("tf")]
    pairs = {OpKey.of_request(r.request): ("round_ste", ()) for r in fulls}
    out, lock = [], threading.Lock()

    def note(kind):
        def take(*args):
            with lock:
                out.append((kind, threading.current_thread().name, args))

        return take

    run = RunAnalysis(note("result"), note("checks"), note("parity"), pairs, cancelled)
    for r in fulls:
        run.put(ResultArrived(_partial(r)))
    for r in fulls:
        run.put(ResultArrived(r))
    for r in fulls:
        run.put(ChecksArrived(r))
    run.close()
    return fulls, out


def test_each_op_comes_out_in_its_order_from_its_frameworks_lane():
    fulls, out = _run()
    assert not [t for t in threading.enumerate() if t.name.startswith("gradviz-analyze")]
    for fw in ("torch", "tf"):
        mine = [(kind, args) for kind, lane, args in out if lane == f"gradviz-analyze-{fw}"]
        got = [(k, a[0].result.partial) for k, a in mine if k == "result"] + [
            (k, None) for k, _a in mine if k == "checks"
        ]
        assert got == [("result", True), ("result", False), ("checks", None)]
        assert [k for k, _a in mine if k != "parity"] == ["result", "result", "checks"]
        partial, final = (a[0] for k, a in mine if k == "result")
        assert final.result is [r for r in fulls if r.framework == fw][0]
        # the final result shares its partial's custom array: its curve is taken as it is
        assert final.series[("x", "custom")] is partial.series[("x", "custom")]
        assert final.problem == partial.problem == ""


def test_the_lane_that_completes_a_pair_makes_its_parity_after_both_results():
    fulls, out = _run()
    [(at, (pair, analyses))] = [(i, args) for i, (k, _l, args) in enumerate(out) if k == "parity"]
    assert pair == "round_ste"
    finals = [i for i, (k, _l, a) in enumerate(out) if k == "result" and not a[0].result.partial]
    assert max(finals) < at
    assert sorted(a.result.framework for a in analyses) == ["tf", "torch"]
    rows = parity(fulls)
    assert len(rows) == 8 and all(a.parity == tuple(rows) for a in analyses)
    x_custom = [(p.verdict, p.max_abs_err) for p in rows if (p.tensor, p.mode) == ("x", "custom")]
    assert x_custom == [("match", 0.0)]  # the same seeded gradient in both frameworks


def test_no_parity_once_the_run_is_being_cancelled():
    _fulls, out = _run(cancelled=lambda: True)
    assert [k for k, _l, _a in out].count("result") == 4
    assert "parity" not in [k for k, _l, _a in out]
