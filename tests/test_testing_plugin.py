"""The pytest plugin on a corpus (tests/corpus/pytest_plugin), in a pytest of its own started as
a subprocess: every op an item `file::op[framework]`, passing for match / surrogate or the op's
expect=, failing with the op's report as the failure text; -k, -x and --lf select as usual."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "corpus" / "pytest_plugin"

PASSING = {
    "ops_torch.py::Square[torch]",
    "ops_torch.py::round_ste[torch]",
    "ops_torch.py::Reversal[torch]",
    "ops_tf.py::round_ste[tf]",
}
FAILING = {
    "ops_torch.py::HalfSquare[torch]",
    "ops_torch.py::NotASurrogate[torch]",
    "ops_tf.py::cube_wrong[tf]",
}


@pytest.fixture
def ops(tmp_path):
    """The corpus copied into a folder of the test's own (its pytest cache lives there)."""
    shutil.copytree(CORPUS, tmp_path / "ops")
    return tmp_path


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """pytest with the plugin by module name (autoload off: an installed gradviz's entry point
    would load it a second time); this checkout's gradviz first on the path."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONPATH=path, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "gradviz.testing.plugin", "-rA", "--gradviz", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _outcomes(out: str) -> dict[str, str]:
    """node id (without the folder) -> PASSED / FAILED / ERROR, from the -rA summary."""
    found = re.findall(r"^(PASSED|FAILED|ERROR) ops/(\S+)", out, re.M)
    return {node: outcome for outcome, node in found}


def test_every_op_is_an_item_with_its_verdict(ops):
    proc = _pytest(ops, "--continue-on-collection-errors", "ops")
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:] + proc.stderr[-3000:]
    got = _outcomes(out)
    assert got == {
        **{n: "PASSED" for n in PASSING},
        **{n: "FAILED" for n in FAILING},
        "broken_import.py": "ERROR",
    }, out[-4000:]
    # the failure text is the op's report: verdict table, worst element, finding and fix
    half = out.split("_ HalfSquare (torch) _", 1)[1].split("\n_", 1)[0]
    assert (
        "gradviz: HalfSquare (torch) at ops/ops_torch.py:22: differs (passing: match, "
        "surrogate)" in half
    )
    assert re.search(
        r"worst element x\[\d+\]: custom (-?[\d.]+), default (-?[\d.]+), numeric", half
    )
    assert "GV301-grad-wrong at ops/ops_torch.py:33" in half and "fix: " in half
    custom, default = map(
        float,
        re.search(
            r"worst element x\[\d+\]: custom (-?[\d.]+), "
            r"default (-?[\d.]+)",
            half,
        ).groups(),
    )
    assert default == pytest.approx(2 * custom, rel=1e-5)
    assert (
        "gradviz: NotASurrogate (torch) at ops/ops_torch.py:63: expected surrogate, got "
        "match" in out
    )
    assert "gradviz: cube_wrong (tf) at ops/ops_tf.py:14: differs" in out
    # a file that does not import is a collection error at the user's line
    assert "gradviz cannot load" in out and "at ops/broken_import.py:4" in out
    assert "RuntimeError: this op file is broken on purpose" in out


def test_select_stop_and_rerun_the_failures(ops):
    (ops / "ops" / "broken_import.py").unlink()
    chosen = _pytest(ops, "ops", "-k", "Square and torch")
    assert _outcomes(chosen.stdout) == {
        "ops_torch.py::Square[torch]": "PASSED",
        "ops_torch.py::HalfSquare[torch]": "FAILED",
    }
    first = _pytest(ops, "ops/ops_torch.py", "-x")
    assert list(_outcomes(first.stdout).values()).count("FAILED") == 1
    assert "stopping after 1 failures" in first.stdout
    everything = _pytest(ops, "ops")
    assert set(_outcomes(everything.stdout)) == PASSING | FAILING
    again = _pytest(ops, "ops", "--lf")
    assert _outcomes(again.stdout) == {n: "FAILED" for n in FAILING}, again.stdout[-3000:]


def test_without_the_flag_op_files_are_not_collected(ops):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "gradviz.testing.plugin", "ops/ops_torch.py"],
        cwd=ops,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert plain.returncode == 5, plain.stdout[-2000:]  # no tests collected
    assert "collected 0 items" in plain.stdout


def test_strict_reads_expect(capsys):
    """`gradviz run --strict`: a differs the op declares (expect="differs") is no failure."""
    from gradviz.cli import main

    ops = str(CORPUS / "ops_torch.py")
    common = ["--framework", "torch", "--modes", "default,custom,numeric", "--strict", "--quiet"]
    assert main(["run", ops, "--op", "Reversal", *common]) == 0
    assert main(["run", ops, "--op", "HalfSquare", *common]) == 1
    capsys.readouterr()


def test_xdist_runs_the_items(ops):
    """-n 2: each xdist worker collects the same items (node ids) and runs its share."""
    pytest.importorskip("xdist", reason="pytest-xdist is not installed here")
    (ops / "ops" / "broken_import.py").unlink()
    proc = _pytest(ops, "-p", "xdist.plugin", "-n", "2", "ops")
    assert "created: 2/2 workers" in proc.stdout, proc.stdout[-3000:]
    assert _outcomes(proc.stdout) == {
        **{n: "PASSED" for n in PASSING},
        **{n: "FAILED" for n in FAILING},
    }


def test_failing_ops_get_a_reproduction_script(ops):
    """--gradviz-repro DIR: each failing op's script, named in its failure, runs without
    gradviz and prints the report's numbers for the failing tensor."""
    from repro_scripts import printed_rows, run_script

    (ops / "ops" / "broken_import.py").unlink()
    proc = _pytest(ops, "ops/ops_torch.py", "--gradviz-repro", "scripts")
    assert proc.returncode == 1
    scripts = sorted(p.name for p in (ops / "scripts").glob("*.py"))
    assert scripts == ["repro_HalfSquare_torch.py", "repro_NotASurrogate_torch.py"]
    script = ops / "scripts" / "repro_HalfSquare_torch.py"
    assert (
        "reproduction script (needs only torch and numpy): python scripts/repro_HalfSquare"
        "_torch.py" in proc.stdout
    )
    half = proc.stdout.split("_ HalfSquare (torch) _", 1)[1]
    shown = re.search(r"^  x +200 +DIFFERS +(\S+) +(\S+)$", half, re.M).groups()
    assert printed_rows(run_script(script))["x"] == shown


def test_options_the_cli_would_refuse_are_a_usage_error_before_any_worker(ops):
    """The --gradviz-* options go through the settings schema's rule, as gradviz run's flags:
    a seed past 2**32-1 and a timeout of no time are named, pytest stops (exit 4), no file
    loads."""
    proc = _pytest(ops, "--gradviz-seed", str(2**32), "--gradviz-timeout", "0", "ops")
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"--gradviz-seed {2**32}: give an integer from 0 to {2**32 - 1}" in proc.stderr
    assert "--gradviz-timeout 0.0: give a number of seconds" in proc.stderr
    assert "collected" not in proc.stdout
