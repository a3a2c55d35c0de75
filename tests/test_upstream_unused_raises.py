"""GV108 (a backward that never reads its incoming gradient) is about a gradient returned
whatever the upstream: a backward that only raises returns none, and the error is what it did
(real workers, both frameworks; the corpus's backward raises ValueError on its marked line)."""

from pathlib import Path

import pytest

from gradviz.compare import compare_result
from gradviz.diagnostics import diagnose
from gradviz.model import RunRequest

BROKEN = Path(__file__).resolve().parent / "corpus" / "broken"


@pytest.mark.parametrize(
    "framework, qualname", [("torch", "RaiseBackward"), ("tf", "raise_backward")]
)
def test_a_backward_that_raises_is_not_said_to_ignore_its_upstream(engine, framework, qualname):
    path = BROKEN / f"raise_backward_{framework}.py"
    [res] = engine.run([RunRequest(str(path), qualname, framework)])
    assert res.status == "error" and res.error.type == "ValueError"
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if "FAILS HERE" in ln)
    assert res.error.where == f"{path}:{line}"
    assert "GV108-upstream-unused" not in {f.code for f in diagnose(res, compare_result(res))}
