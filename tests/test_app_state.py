"""The Qt-free app state (gradviz.app): loaded files and pairs, results by op with partial and
final stages, run progress, pending re-runs, and analyze(). Real engine runs feed it the way the
window's bridge does; no display, no PySide6."""

from dataclasses import replace

import numpy as np
from samples import ste_result

from gradviz.app.analysis import analyze
from gradviz.app.loaded import LoadedFiles
from gradviz.app.state import AppState
from gradviz.catalog import pair_ops
from gradviz.model import ErrorInfo, FileCatalog, OpInfo, RunRequest, RunResult, RunSettings

SCALE_SRC = """
import torch

class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * {factor}
"""


def _op(name, fw, qualname, file, line=1):
    return OpInfo(name, fw, "function", qualname, file, line, ("x",))


def _record(state):
    events = []
    for name in (
        "files",
        "run_started",
        "progress",
        "result",
        "checks",
        "run_finished",
        "file_removed",
    ):
        state.subscribe(name, lambda *args, name=name: events.append((name, *args)))
    return events


# --- pairs -----------------------------------------------------------------------------------
def test_pairs_are_the_cli_pairs_and_a_second_same_name_op_has_its_qualified_pair():
    a, b = "/w/a_ops.py", "/w/b_ops.py"
    cats = [
        FileCatalog(a, "torch", (_op("clip", "torch", "Clip", a),)),
        FileCatalog(b, "torch", (_op("clip", "torch", "Clip", b),)),
        FileCatalog(b, "tf", (_op("clip", "tf", "clip_tf", b, 5),)),
    ]
    loaded = LoadedFiles([a, b])
    loaded.set_catalogs(cats, [a, b])
    pairs = loaded.pairs()
    assert (
        {name: set(impls) for name, impls in pairs.items()}
        == {p.name: set(p.impls) for p in pair_ops(cats)}
        == {"clip": {"torch", "tf"}, "clip (b_ops.py)": {"torch"}}
    )
    # each op names the pair it is shown in (the second torch Clip is not "clip")
    assert loaded.pair_name(("torch", a, "Clip")) == "clip"
    assert loaded.pair_name(("torch", b, "Clip")) == "clip (b_ops.py)"
    assert loaded.keys_of("clip (b_ops.py)") == [("torch", b, "Clip")]


def test_hand_made_pair_and_undo():
    t, f = "/w/t.py", "/w/f.py"
    loaded = LoadedFiles([t, f])
    loaded.set_catalogs(
        [
            FileCatalog(t, "torch", (_op("Scale", "torch", "Scale", t),)),
            FileCatalog(f, "tf", (_op("mul", "tf", "mul", f),)),
        ]
    )
    assert set(loaded.pairs()) == {"Scale", "mul"}
    assert loaded.pair_with(("tf", f, "mul"), ("torch", t, "Scale")) == "mul"
    assert set(loaded.pairs()) == {"mul"} and set(loaded.pairs()["mul"]) == {"torch", "tf"}
    assert loaded.pair_name(("torch", t, "Scale")) == "mul"
    loaded.unpair(("torch", t, "Scale"))
    assert set(loaded.pairs()) == {"Scale", "mul"}


def test_reload_with_fewer_ops_and_a_load_error_and_remove():
    f = "/w/ops.py"
    loaded = LoadedFiles([f])
    loaded.set_catalogs(
        [FileCatalog(f, "torch", (_op("a", "torch", "A", f), _op("b", "torch", "B", f, 9)))]
    )
    loaded.check(("torch", f, "A"), False)
    assert loaded.checked_keys() == [("torch", f, "B")]
    err = ErrorInfo("SyntaxError", "invalid syntax", f"{f}:3", kind="load")
    loaded.set_catalogs([FileCatalog(f, "torch", (), err)], [f])
    assert loaded.ops == {} and loaded.errors[f] is err and loaded.pairs() == {}
    loaded.remove(f)
    assert loaded.files == [] and loaded.errors == {}


# --- runs, with fake results -------------------------------------------------------------------
def _as_run(res: RunResult, file: str, qualname: str = "RoundSTE", **settings) -> RunResult:
    req = RunRequest(file, qualname, res.framework, RunSettings(**settings))
    return replace(res, request=req, op=replace(res.op, file=file))


def _state_with_ste(tmp_path):
    path = str(tmp_path / "ste.py")
    state = AppState([path])
    state.catalogs_arrived(
        [
            FileCatalog(path, fw, (_op("round_ste", fw, "RoundSTE", path),))
            for fw in ("torch", "tf")
        ],
        [path],
    )
    return state, path


def test_partial_then_final_result_and_progress(tmp_path):
    state, path = _state_with_ste(tmp_path)
    events = _record(state)
    keys = state.loaded.checked_keys()
    reqs = state.requests(keys, lambda fw: RunSettings())
    state.run_started(reqs)
    assert all(state.progress.states[k] == "queued" for k in keys) and state.running
    torch_key = ("torch", path, "RoundSTE")
    state.op_started(next(r for r in reqs if r.framework == "torch"))
    assert state.progress.states[torch_key] == "running"
    full = _as_run(ste_result("torch"), path)
    partial = replace(
        full,
        partial=True,
        request=replace(
            full.request, settings=full.request.settings.with_(modes=("default", "custom"))
        ),
    )
    state.arrived(analyze(partial))
    # stored under the request as asked (numeric included: the grid says "computing…")
    assert state.results.stage(torch_key) == "partial"
    assert "numeric" in state.results.result(torch_key).request.settings.modes
    assert state.progress.states[torch_key] == "running" and state.progress.done == 0
    assert not state.pair_in_step("round_ste")  # tf has no result yet
    state.arrived(analyze(full))
    assert state.results.stage(torch_key) == "final" and state.progress.states[torch_key] == "ok"
    assert state.progress.done == 1
    assert [e[0] for e in events if e[0] in ("result", "run_started")] == [
        "run_started",
        "result",
        "result",
    ]
    # the model's analysis: the STE's custom gradient is a surrogate for x
    comp = state.results.get(torch_key).comparison
    assert {t.name: t.verdict for t in comp.tensors}["x"] == "surrogate"


def test_run_asked_while_running_waits_and_the_latest_wins(tmp_path):
    state, path = _state_with_ste(tmp_path)
    keys = state.loaded.checked_keys()
    state.run_started(state.requests(keys, lambda fw: RunSettings()))
    state.defer(keys[:1])
    state.defer(keys[1:])
    assert state.run_finished([]) == keys[1:]
    assert state.pending is None and not state.running
    state.defer(keys)
    state.cancel()  # Cancel drops a run waiting its turn
    assert state.run_finished([]) is None


def test_summary_counts_cancelled_apart_from_failed(tmp_path):
    state, path = _state_with_ste(tmp_path)
    ok = _as_run(ste_result("torch"), path)
    failed = replace(
        _as_run(ste_result("tf"), path),
        status="error",
        tensors=(),
        error=ErrorInfo("ValueError", "bad", f"{path}:3"),
    )
    cancelled = replace(
        _as_run(ste_result("tf"), path, seed=1),
        status="error",
        tensors=(),
        error=ErrorInfo("Cancelled", "the run was cancelled", kind="cancelled"),
    )
    for r in (ok, failed):
        state.arrived(analyze(r))
    text = state.summary([ok, failed])
    assert "1 failed" in text and "cancelled" not in text
    state.arrived(analyze(cancelled))
    text = state.summary([ok, cancelled])
    assert "1 cancelled" in text and "failed" not in text and "error" not in text
    assert state.progress.states[("tf", path, "RoundSTE")] == "cancelled"


def test_changed_file_is_run_again_once_reloaded(tmp_path):
    state, path = _state_with_ste(tmp_path)
    state.files_changed([path])
    state.loading_started()
    keys, first = state.catalogs_arrived(
        [FileCatalog(path, "torch", (_op("round_ste", "torch", "RoundSTE", path),))], [path]
    )
    assert keys == [("torch", path, "RoundSTE")] and not first
    assert state.loading == 0
    keys, _ = state.catalogs_arrived([], [path])  # reloaded again without a change: no re-run
    assert keys is None


def test_remove_file_forgets_its_results(tmp_path):
    state, path = _state_with_ste(tmp_path)
    events = _record(state)
    state.arrived(analyze(_as_run(ste_result("torch"), path)))
    state.remove_file(path)
    assert state.loaded.files == [] and len(state.results) == 0
    assert ("file_removed", path) in events


# --- with the real engine ------------------------------------------------------------------------
def test_real_engine_run_moves_the_state_as_the_bridge_would(engine, write_module):
    path = write_module("scale_ops.py", SCALE_SRC.format(name="Scale", factor=3.0))
    state = AppState()
    state.open([path])
    state.run_when_loaded = True
    state.loading_started()
    keys, first = state.catalogs_arrived(engine.load([path]), [path])
    assert first and keys == [("torch", path, "Scale")]
    events = _record(state)
    reqs = state.requests(keys, lambda fw: RunSettings(modes=("default", "custom", "numeric")))
    state.run_started(reqs)
    results = engine.run(
        reqs,
        on_start=state.op_started,
        on_result=lambda r: state.arrived(analyze(r)),
        on_partial=lambda r: state.arrived(analyze(r)),
    )
    assert state.run_finished(results) is None
    kinds = [e[0] for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    stages = [e[2].result.partial for e in events if e[0] == "result"]
    assert stages == [True, False]  # custom+default first, then with numeric
    key = keys[0]
    assert state.progress.states[key] == "ok" and state.progress.done == 1
    a = state.results.get(key)
    x = a.result.tensor("x")
    np.testing.assert_allclose(x.grads["custom"], 3.0)
    np.testing.assert_allclose(x.grads["default"], 2.0)
    assert {t.name: t.verdict for t in a.comparison.tensors}["x"] == "differs"
    assert state.summary(results) == "1 op run — 2 tensors: 1 match, 1 differs"
    assert ("x", "custom") in a.series  # plot curves for the grid


def test_op_and_file_marks_are_the_worst_verdict(tmp_path):
    state, path = _state_with_ste(tmp_path)
    torch_key, tf_key = ("torch", path, "RoundSTE"), ("tf", path, "RoundSTE")
    assert state.op_mark(torch_key) == "" and state.file_mark(path) == ""
    state.run_started(state.requests([torch_key, tf_key], lambda fw: RunSettings()))
    assert state.op_mark(torch_key) == "queued" and state.file_mark(path) == "running"
    state.arrived(analyze(_as_run(ste_result("torch"), path)))
    # the STE's x is a surrogate, its output matches: the op shows its worst, surrogate
    assert state.op_mark(torch_key) == "surrogate"
    assert state.file_mark(path) == "running"  # tf still queued
    cancelled = replace(
        _as_run(ste_result("tf"), path),
        status="error",
        tensors=(),
        error=ErrorInfo("Cancelled", "the run was cancelled", kind="cancelled"),
    )
    state.arrived(analyze(cancelled))
    # the tf op was not checked: the file does not show the torch op's pass
    assert state.op_mark(tf_key) == "cancelled" and state.file_mark(path) == "cancelled"
    nan = ste_result("tf", nan_at=(3,))
    state.arrived(analyze(_as_run(nan, path)))
    assert state.op_mark(tf_key) == "non-finite" and state.file_mark(path) == "non-finite"
    err = ErrorInfo("SyntaxError", "invalid syntax", f"{path}:3", kind="load")
    state.catalogs_arrived([FileCatalog(path, "torch", (), err)], [path])
    assert state.file_mark(path) == "error"


def test_an_op_with_nothing_checked_is_marked_unchecked_never_a_pass(tmp_path):
    """Custom alone with no numeric reference, or no tensor at all (default alone whose
    override could not be removed): the tree shows ?, and the file does not pass."""
    state, path = _state_with_ste(tmp_path)
    torch_key, tf_key = ("torch", path, "RoundSTE"), ("tf", path, "RoundSTE")
    state.run_started(state.requests([torch_key, tf_key], lambda fw: RunSettings()))
    r = ste_result("torch", numeric=False)
    alone = replace(
        r, tensors=tuple(replace(t, grads={"custom": t.grads["custom"]}) for t in r.tensors)
    )
    alone = _as_run(alone, path, modes=("custom",))
    state.arrived(analyze(alone))
    assert state.op_mark(torch_key) == "unchecked"
    assert state.summary([alone]) == "1 op run — 2 tensors: 2 unchecked"
    state.arrived(analyze(_as_run(ste_result("tf"), path)))
    assert state.op_mark(tf_key) == "surrogate" and state.file_mark(path) == "unchecked"
    state.arrived(analyze(_as_run(replace(r, tensors=()), path, modes=("default",))))
    assert state.op_mark(torch_key) == "unchecked"


def test_in_flight_is_the_op_each_worker_has_now(tmp_path):
    state, path = _state_with_ste(tmp_path)
    torch_key, tf_key = ("torch", path, "RoundSTE"), ("tf", path, "RoundSTE")
    reqs = state.requests([torch_key, tf_key], lambda fw: RunSettings())
    state.run_started(reqs)
    assert state.in_flight() == []
    for r in reqs:
        state.op_started(r)
    assert sorted(state.in_flight()) == sorted([torch_key, tf_key])
    assert state.in_flight("round_ste") and state.in_flight("other") == []
    partial = replace(_as_run(ste_result("torch"), path), partial=True)
    state.arrived(analyze(partial))
    # back from its first pass: still "running" (numeric to come) but no worker has it now
    assert state.progress.states[torch_key] == "running" and state.in_flight() == [tf_key]
    assert state.progress.elapsed(torch_key) is not None


def test_numeric_pass_taken_before_the_partial_arrives_is_still_in_flight(tmp_path):
    """The partial is analysed before it reaches the window, the start of the numeric pass is
    not: that start can come first, and the op is then in flight (Skip this op skips it)."""
    state, path = _state_with_ste(tmp_path)
    key = ("torch", path, "RoundSTE")
    (req,) = state.requests([key], lambda fw: RunSettings())
    state.run_started([req])
    state.op_started(req)  # quick pass
    state.op_started(req)  # numeric pass, before the partial
    state.arrived(analyze(replace(_as_run(ste_result("torch"), path), partial=True)))
    assert state.in_flight() == [key] and state.progress.states[key] == "running"


def test_numeric_cancelled_after_the_partial_is_kept_and_marked_cancelled(tmp_path):
    """The engine's answer for an op whose numeric pass was cancelled: custom and default of its
    quick pass (numeric_pass.numeric_cancelled). Stored, counted cancelled, its mark ⊘."""
    from gradviz.engine.numeric_pass import numeric_cancelled

    state, path = _state_with_ste(tmp_path)
    key = ("torch", path, "RoundSTE")
    (req,) = state.requests([key], lambda fw: RunSettings())
    state.run_started([req])
    state.op_started(req)
    full = _as_run(ste_result("torch"), path)
    quick = replace(
        full,
        request=replace(req, settings=req.settings.with_(modes=("default", "custom"))),
        tensors=tuple(
            replace(t, grads={m: g for m, g in t.grads.items() if m != "numeric"})
            for t in full.tensors
        ),
    )
    state.arrived(analyze(replace(quick, partial=True)))
    kept = numeric_cancelled(quick, req, skipped=False)
    state.arrived(analyze(kept))
    held = state.results.get(key)
    assert held.result is kept and not held.result.partial and held.result.numeric_cancelled
    assert state.progress.states[key] == "cancelled" and state.op_mark(key) == "cancelled"
    x = next(t for t in held.comparison.tensors if t.name == "x")
    assert x.numeric_cancelled and x.stats["numeric"].cancelled
    assert "numeric" not in x.metrics and "custom~numeric" not in x.metrics
    assert state.summary([kept]) == "1 op run, 1 cancelled"


def test_numeric_failed_after_the_partial_is_kept_and_counts_as_failed(tmp_path):
    """The engine's answer for an op whose numeric pass timed out: custom and default of its
    quick pass with the numeric mode's error (numeric_pass.numeric_failed). Stored, counted
    failed (not match: custom was not checked), its mark the error mark; a worse verdict shows
    as it is."""
    from gradviz.compare.verdicts import shown_verdict
    from gradviz.engine.numeric_pass import numeric_failed

    state, path = _state_with_ste(tmp_path)
    key = ("torch", path, "RoundSTE")
    (req,) = state.requests([key], lambda fw: RunSettings())
    state.run_started([req])
    state.op_started(req)
    full = _as_run(ste_result("torch", spike_at=3), path)
    quick = replace(
        full,
        request=replace(req, settings=req.settings.with_(modes=("default", "custom"))),
        tensors=tuple(
            replace(t, grads={m: g for m, g in t.grads.items() if m != "numeric"}, numeric=None)
            for t in full.tensors
        ),
    )
    state.arrived(analyze(replace(quick, partial=True)))
    err = ErrorInfo(
        "Timeout",
        "the numeric pass did not finish within 3 s; its torch worker was stopped and replaced",
        f"{path}:7",
        kind="timeout",
    )
    kept = numeric_failed(quick, RunResult(req, None, status="error", error=err, elapsed=3.0), req)
    assert kept.status == "ok" and kept.error is None and not kept.partial
    assert (
        kept.numeric_failed and not kept.numeric_cancelled and kept.elapsed == quick.elapsed + 3.0
    )
    state.arrived(analyze(kept))
    held = state.results.get(key)
    assert held.result is kept
    assert state.progress.states[key] == "error" and state.op_mark(key) == "error"
    assert state.summary([kept]) == "1 op run, 1 failed"
    by_name = {t.name: t for t in held.comparison.tensors}
    x, out = by_name["x"], by_name["out"]
    assert x.numeric_failed and not x.numeric_cancelled
    assert x.verdict == "surrogate" and shown_verdict(x) == "surrogate, numeric failed"
    assert out.verdict == "match" and shown_verdict(out) == "match, numeric failed"
    assert (
        x.stats["numeric"].raised
        and x.stats["numeric"].reason
        == f"failed: Timeout at {path}:7: the numeric pass did not finish within 3 s; its torch "
        "worker was stopped and replaced"
    )
    assert x.explanation.endswith(
        "(numeric failed: Timeout at " + f"{path}:7: the numeric pass did "
        "not finish within 3 s; its torch worker was stopped and "
        "replaced: custom is not checked against numeric)"
    )
    # a verdict worse than a pass stays as it is
    bad = replace(x, verdict="differs")
    assert shown_verdict(bad) == "differs"


def test_a_previous_runs_result_does_not_put_a_pair_in_step(tmp_path):
    state, path = _state_with_ste(tmp_path)
    keys = [("torch", path, "RoundSTE"), ("tf", path, "RoundSTE")]
    for seed in (0, 1):  # two runs of the same pair
        state.run_started(state.requests(keys, lambda fw, seed=seed: RunSettings(seed=seed)))
        state.arrived(analyze(_as_run(ste_result("torch", seed=seed), path, seed=seed)))
        # tf's result of the run before is stored, but this batch has none from tf yet
        assert not state.pair_in_step("round_ste")
        state.arrived(analyze(_as_run(ste_result("tf", seed=seed), path, seed=seed)))
        assert state.pair_in_step("round_ste")
        state.run_finished([])


def test_a_longer_timeout_makes_only_a_timed_out_result_stale(tmp_path):
    state, path = _state_with_ste(tmp_path)
    state.run_started(
        state.requests(state.loaded.checked_keys(), lambda fw: RunSettings(timeout=60.0))
    )
    ok = _as_run(ste_result("torch"), path, timeout=60.0)
    timed_out = replace(
        _as_run(ste_result("tf"), path, timeout=60.0),
        status="error",
        tensors=(),
        error=ErrorInfo("Timeout", "ran past 60 s", kind="timeout"),
    )
    for r in (ok, timed_out):
        state.arrived(analyze(r))
    torch_key, tf_key = ("torch", path, "RoundSTE"), ("tf", path, "RoundSTE")
    state.settings_changed({"torch": RunSettings(timeout=60.0), "tf": RunSettings(timeout=60.0)})
    assert not state.is_stale(torch_key) and not state.is_stale(tf_key)
    state.settings_changed({"torch": RunSettings(timeout=120.0), "tf": RunSettings(timeout=120.0)})
    assert not state.is_stale(torch_key)  # it finished within either
    assert state.is_stale(tf_key)  # it might finish within 120 s
    state.settings_changed(
        {"torch": RunSettings(timeout=60.0, seed=3), "tf": RunSettings(timeout=60.0)}
    )
    assert state.is_stale(torch_key) and not state.is_stale(tf_key)
