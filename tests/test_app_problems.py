"""One entry per problem (gradviz.app.problems): an exception several modes hit is one entry
naming them; an exception a diagnostic rewrote is that diagnostic, the exception kept as its
detail. Real runs of the trap examples through the session engine; no display."""

from dataclasses import replace

from samples import ste_result

from gradviz.app.analysis import analyze
from gradviz.app.problems import problems
from gradviz.model import ErrorInfo, RunRequest, RunSettings

RAISES_SRC = """
import torch

class Raises(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        raise ValueError("my forward is broken")

    @staticmethod
    def backward(ctx, g):
        return g
"""


def _run(engine, path, qualname):
    [res] = engine.run([RunRequest(str(path), qualname, "torch", RunSettings())])
    return res


def test_rewritten_exception_is_one_entry_with_the_exception_as_detail(engine, examples_dir):
    path = examples_dir / "traps_torch.py"
    res = _run(engine, path, "TooManyGrads")
    key = ("torch", str(path), "TooManyGrads")
    found = problems(key, analyze(res))
    assert res.mode_errors  # the custom mode raised torch's error
    assert [p.code for p in found] == ["GV101-grad-count"]
    [p] = found
    assert "incorrect number of gradients" in p.detail and p.fix and p.key == key
    line = int(p.where.rpartition(":")[2])
    assert "return" in path.read_text().splitlines()[line - 1]


def test_exception_of_every_mode_is_one_entry_naming_the_modes(engine, write_module):
    path = write_module("raises.py", RAISES_SRC)
    res = _run(engine, path, "Raises")
    assert res.status == "error"
    found = [p for p in problems(("torch", path, "Raises"), analyze(res)) if not p.code]
    assert len(found) == 1, found
    [p] = found
    assert p.message == "ValueError: my forward is broken"
    line = next(
        i for i, text in enumerate(RAISES_SRC.splitlines(), 1) if "my forward is broken" in text
    )
    assert p.where == f"{path}:{line}"


def test_cancelled_run_is_no_problem_and_a_partial_one_waits(tmp_path):
    res = ste_result("torch")
    cancelled = replace(
        res,
        status="error",
        tensors=(),
        error=ErrorInfo("Cancelled", "the run was cancelled", kind="cancelled"),
    )
    assert problems(("torch", "/f.py", "RoundSTE"), analyze(cancelled)) == []
    partial = replace(res, partial=True, warnings=("a warning",))
    assert problems(("torch", "/f.py", "RoundSTE"), analyze(partial)) == []
    final = problems(("torch", "/f.py", "RoundSTE"), analyze(replace(partial, partial=False)))
    # the final result: its STE finding (numeric needed) and its warning
    assert [(p.code, p.message) for p in final][-1] == ("", "a warning")
    assert [p.code for p in final][:-1] == ["GV302-grad-surrogate"]
