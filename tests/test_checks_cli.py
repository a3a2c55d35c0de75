"""--checks on the command line: parsing, the JSON field of DESIGN.md, the terminal summary line,
--strict on a failed check, and a GV7xx code for every way a check can fail."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradviz.cli.commands import EXIT_USAGE, main
from gradviz.diagnostics import CODES
from gradviz.diagnostics.contract_checks import CODE_OF, FALLBACK, NOTE_OF
from gradviz.model import CHECKS, CheckResult, parse_checks

ROOT = Path(__file__).resolve().parent.parent
OPS = ROOT / "tests" / "corpus" / "checks" / "torch_ops.py"


def test_parse_checks_all_none_and_a_list_in_contract_order():
    assert parse_checks("all") == CHECKS
    assert parse_checks("none") == ()
    assert parse_checks("vmap,double_backward") == ("double_backward", "vmap")
    with pytest.raises(ValueError, match="double_backward"):
        parse_checks("vmap,gradcheck")


def test_an_unknown_check_is_bad_usage(capsys):
    assert main(["run", str(OPS), "--checks", "gradcheck"]) == EXIT_USAGE
    assert "gradcheck" in capsys.readouterr().err


def test_every_contract_code_is_reachable_and_titled():
    contract = {c for c in CODES if c.startswith("GV7")}
    reachable = (
        {code for code, _ in CODE_OF.values()} | set(FALLBACK.values()) | set(NOTE_OF.values())
    )
    assert reachable == contract
    assert {name for name, _ in CODE_OF} == set(FALLBACK) == set(CHECKS)


def test_check_results_keep_the_json_shape_of_design():
    c = CheckResult("vmap", "fail", "m", "/a.py:3", fix="f", kind="setup_context")
    assert c.as_dict() == {"name": "vmap", "status": "fail", "message": "m", "where": "/a.py:3"}


def test_run_with_checks_prints_a_line_per_op_writes_json_and_strict_fails(tmp_path):
    out = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gradviz",
            "run",
            str(OPS),
            "--framework",
            "torch",
            "--op",
            "Cube",
            "--op",
            "SquareWrong",
            "--checks",
            "precision,double_backward",
            "--json",
            str(out),
            "--strict",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 1, proc.stderr  # SquareWrong fails precision (and differs)
    assert "Cube (torch): double_backward pass, precision pass" in proc.stdout
    assert "SquareWrong (torch): double_backward pass, precision FAIL" in proc.stdout
    assert "GV751-precision-bug" in proc.stdout
    report = json.loads(out.read_text())
    assert report["settings"]["checks"] == ["double_backward", "precision"]
    ops = {o["name"]: o for o in report["ops"]}
    assert [c["name"] for c in ops["Cube"]["checks"]] == ["double_backward", "precision"]
    wrong = ops["SquareWrong"]["checks"][1]
    assert set(wrong) == {"name", "status", "message", "where"}
    assert wrong["status"] == "fail" and wrong["where"].startswith(str(OPS) + ":")
    assert any(d["code"] == "GV751-precision-bug" for d in ops["SquareWrong"]["diagnostics"])


def test_strict_fails_on_a_check_alone(engine):
    """An op whose verdicts all match but which fails a check: --strict exits 1. One that
    torch.func cannot transform (forward(ctx, ...)) is skipped there: strict passes it."""
    from gradviz.cli.commands import _exit_code
    from gradviz.compare import compare_result
    from gradviz.model import RunRequest, RunSettings

    once, old = engine.run(
        [
            RunRequest(str(OPS), q, "torch", RunSettings(checks=("double_backward", "vmap")))
            for q in ("CubeOnce", "OldStyle")
        ]
    )
    for res, strict_code in ((once, 1), (old, 0)):
        comp = compare_result(res)
        assert all(t.verdict == "match" for t in comp.tensors)
        assert _exit_code([res], [comp], strict=False) == 0
        assert _exit_code([res], [comp], strict=True) == strict_code
    assert [c.status for c in old.checks] == ["pass", "skip"]
