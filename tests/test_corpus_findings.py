"""Every op of tests/corpus with every contract check (issue 25): no check raised out of gradviz's
own code, and no tensor carries two findings that contradict each other: an intended surrogate
or reversal (GV302) beside an error-level finding, or the precision check's "float32 rounding"
beside an error-level finding. Nor does an op the precision check cleared as rounding get an
error-level finding from another check (GV7xx, which name no tensor) unless that check found its
difference in float64 too, and says so: compiled and vmap compare two float32 evaluations, which
differ by the op's own rounding (square_cancel under tf.function: 0.0078)."""

from pathlib import Path

from gradviz.compare import compare_result
from gradviz.diagnostics import diagnose
from gradviz.model import CHECKS, RunRequest, RunSettings

# ops that hang, crash the worker or eat memory on purpose cost a timeout or a restart each and
# run no check: tests/test_worker.py and test_isolation.py have them
_NOT_RUN = ("hang", "segfault", "abort", "os_exit", "sys_exit", "memory_hog")
# what a check's failure says when its float64 re-run differs as well (checks/float64_witness.py)
_NOT_ROUNDING = "not float32 rounding"


def _corpus_files() -> list[str]:
    here = Path(__file__).resolve().parent / "corpus"
    return sorted(
        str(p) for p in here.glob("*/*.py") if not any(word in p.name for word in _NOT_RUN)
    )


def test_no_check_raises_and_no_two_findings_contradict(engine):
    reqs = [
        RunRequest(cat.file, op.qualname, cat.framework, RunSettings(checks=CHECKS))
        for cat in engine.load(_corpus_files())
        for op in cat.ops
    ]
    assert len(reqs) >= 110
    checked, problems = 0, []
    for res in engine.run(reqs):
        name = f"{Path(res.request.file).name}::{res.request.qualname} ({res.framework})"
        checked += bool(res.checks)
        problems += [
            f"{name}: {c.name}: {c.message}" for c in res.checks if "gradviz's own" in c.message
        ]
        found = diagnose(res, compare_result(res))
        rounding = {
            n for c in res.checks if c.name == "precision" and c.status == "pass" for n in c.tensors
        }
        if rounding:
            problems += [
                f"{name}: precision says rounding, {f.code}: {f.message}"
                for f in found
                if f.code.startswith("GV7")
                and f.severity == "error"
                and _NOT_ROUNDING not in f.message
            ]
        for t in res.tensors:
            on = [f for f in found if f.tensor == t.name]
            errors = [f.code for f in on if f.severity == "error"]
            intended = [f.code for f in on if f.code == "GV302-grad-surrogate"]
            if errors and intended:
                problems.append(f"{name} {t.name}: intended {intended} and errors {errors}")
            if errors and t.name in rounding:
                problems.append(f"{name} {t.name}: precision says rounding, errors {errors}")
    assert checked >= 110  # the checks ran for nearly every op, not only the loads
    assert problems == []
