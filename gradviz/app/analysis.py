"""The analysis of one run result: its verdicts, diagnostics and the decimated curves of the
default view, computed once where the result arrives (numpy only, no Qt).

A 1M-element tensor costs ~0.05 s to compare (custom vs default and each mode's statistics) and
under 1 ms per curve to decimate when its gradients are finite (more with NaN/Inf, which are set
aside); doing that on the thread that paints would still hold up the window, so the window's run
task calls analyze() off the GUI thread; the command line calls it for the same verdicts and
diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from gradviz.flow import FlowRow, flow_of
from gradviz.model import MODES, RunRequest, RunResult
from gradviz.plots import series as ps

if TYPE_CHECKING:  # compare and diagnostics are imported where an analysis is made
    from gradviz.compare import OpComparison
    from gradviz.compare.torch_vs_tf import ParityRow
    from gradviz.diagnostics import Finding


@dataclass(frozen=True)
class Analysis:
    """What the CLI's output and reports, the window's grid, Numbers, Diagnostics and exports
    take for one op run: its result, its comparison (verdicts and numbers), its findings,
    the contract checks' (GV7xx) among them once the checks are in (with_checks), the
    stack graph's gradient flow (a FlowRow per layer; none for other graphs), and the parity
    rows comparing it with the op of its name in each other framework (app.parity_rows), None
    until the op is paired, () when it has no twin that ran."""

    result: RunResult
    comparison: OpComparison | None = None
    # (tensor name, mode) -> the values-by-index curve of that gradient
    series: dict = field(default_factory=dict)
    problem: str = ""  # why the comparison could not be made
    findings: tuple[Finding, ...] = ()
    flow: tuple[FlowRow, ...] = ()
    parity: tuple[ParityRow, ...] | None = None

    def as_asked(self, request: RunRequest) -> Analysis:
        """This (partial) analysis under the request the op was asked with: its flow rows are
        made again, since a mode asked but not in yet (numeric) has a row entry saying so."""
        result = replace(self.result, request=request)
        return replace(self, result=result, flow=tuple(flow_of(result)))

    def with_checks(self, result: RunResult) -> Analysis:
        """This analysis once the op's contract checks came back in `result` (the same run's
        plain result, its `checks` filled in): their findings (GV7xx) join the others, so the
        op tree's mark, Diagnostics and the JSON export see them as the command line does."""
        base = replace(self.result, checks=result.checks)
        if base.partial or self.comparison is None:  # as analyze(): no findings (yet)
            return replace(self, result=base)
        from gradviz.diagnostics import with_check_findings

        return replace(
            self,
            result=base,
            findings=tuple(with_check_findings(self.findings, base, self.comparison)),
        )


def result_as_pair(result: RunResult, pair: str) -> RunResult:
    """The result under its pair's name: the window pairs a torch and a tf op under one name,
    and what is drawn, exported and compared across frameworks is about the pair (a run that
    failed before its op was found is named by its request). The one place a result is renamed."""
    if result.name == pair:
        return result
    if result.op is None:
        return replace(result, request=replace(result.request, qualname=pair))
    return replace(result, op=replace(result.op, name=pair))


def comparison_as_pair(comparison: OpComparison, pair: str) -> OpComparison:
    """The comparison of a result under its pair's name (result_as_pair)."""
    return comparison if comparison.name == pair else replace(comparison, name=pair)


def values_series(result: RunResult, earlier: Analysis | None = None) -> dict:
    """The decimated values-by-index curve of every gradient of `result`; a curve `earlier`
    made from the very same array is taken as it is."""
    old = {}
    if earlier is not None:
        old = {(t.name, m): g for t in earlier.result.tensors for m, g in t.grads.items()}
    out = {}
    for t in result.tensors:
        for mode in MODES:
            g = t.grads.get(mode)
            if g is None:
                continue
            key = (t.name, mode)
            if earlier is not None and old.get(key) is g and key in earlier.series:
                out[key] = earlier.series[key]
            else:
                out[key] = ps.minmax_decimate(g)
    return out


def analyze(result: RunResult, curves: bool = True, earlier: Analysis | None = None) -> Analysis:
    """Verdicts, diagnostics and (with `curves`) plot curves of one result; a comparison that
    fails is reported, never raised (the result itself must still be shown). A partial result
    (numeric still running) gets no diagnostics yet: several of them need the numeric reference.
    `earlier`: an analysis of the same op (the app's partial result): the final result shares
    its custom and default arrays, so their numbers and curves are taken, not worked out again."""
    findings: tuple = ()
    try:
        from gradviz.compare import compare_result

        before = (earlier.result, earlier.comparison) if earlier is not None else None
        comp, problem = compare_result(result, before), ""
        if not result.partial:
            from gradviz.diagnostics import diagnose

            findings = tuple(diagnose(result, comp))
    except Exception as exc:  # noqa: BLE001 - a bug in compare must not lose the result
        comp, problem = None, f"{type(exc).__name__}: {exc}"
    series = values_series(result, earlier) if curves else {}
    return Analysis(result, comp, series, problem, findings, tuple(flow_of(result)))
