"""gradviz inside the user's own tests: `check` runs one op through gradviz's engine (its worker,
its verdicts and findings) and returns the analysis; `assert_gradients` raises an AssertionError
whose message is that op's report. Importing this loads no Qt and no framework; the workers are
shared by every check of the process (session.py), so a test session imports torch and TF once.

    from gradviz.testing import assert_gradients
    def test_round_ste():
        assert_gradients(RoundSTE, inputs={"x": torch.randn(4, 8)}, expect="surrogate")

The pytest plugin (gradviz.testing.plugin; `pytest --gradviz ops/`) collects every op of files.
"""

from __future__ import annotations

from collections.abc import Iterable

from gradviz.api import expected
from gradviz.testing.judge import judgement, verdicts_of, worst_verdict
from gradviz.testing.locate import OpNotFound
from gradviz.testing.report import op_report, repro_note
from gradviz.testing.run import LoadFailed, check_op

__all__ = [
    "check",
    "assert_gradients",
    "verdicts_of",
    "worst_verdict",
    "op_report",
    "OpNotFound",
    "LoadFailed",
]


def check(
    op,
    inputs: dict | None = None,
    consts: dict | None = None,
    graph: str = "op",
    upstream: str = "random",
    checks: str | Iterable[str] = (),
    framework: str | None = None,
    **options,
):
    """Run `op` (the class or function object itself) as `gradviz run` would, and return its
    gradviz.app.analysis.Analysis: `.result` (the gradients per mode), `.comparison` (the
    verdict per tensor: verdicts_of(analysis)) and `.findings`.

    inputs     per argument: a tensor or array, used as it is (values, dtype, device; its shape is
               the shape of every argument not given), or what @gradviz.op(inputs=) takes
    consts     non-tensor arguments
    checks     contract checks: a tuple of names, "all" or "none"
    framework  "torch" or "tf"; read from the op where it can be (a plain function in a file
               of both frameworks needs it)
    options    seed=0, shape=None, dtype=None (the inputs'), device=None (the inputs', else auto),
               modes=("default", "custom", "numeric"), timeout=120.0, depth=4,
               input_range=(-3.0, 3.0), engine=None (a gradviz Engine of the caller's own)
    """
    return check_op(
        op, dict(inputs or {}), dict(consts or {}), graph, upstream, checks, framework, **options
    )


def assert_gradients(
    op,
    inputs: dict | None = None,
    consts: dict | None = None,
    graph: str = "op",
    upstream: str = "random",
    checks: str | Iterable[str] = (),
    framework: str | None = None,
    expect: str | Iterable[str] | None = None,
    repro=None,
    **options,
):
    """check() that raises AssertionError with the op's report unless every verdict passes
    (match, surrogate), or the op's worst verdict is `expect` (else the op's own
    @gradviz.op(expect=...)); a failed contract check fails too. `repro`: a folder where a
    failing op's reproduction script is written (the report names it). Returns the analysis."""
    analysis = check(op, inputs, consts, graph, upstream, checks, framework, **options)
    wanted = (
        expected(expect)
        if expect is not None
        else (analysis.result.op.expect if analysis.result.op is not None else ())
    )
    passed, _ = judgement(analysis, wanted)
    if not passed:
        raise AssertionError(op_report(analysis, wanted) + repro_note(analysis, repro))
    return analysis
