"""The JSON report is complete on its own and written whatever the terminal can show (issue 11,
items 8 and 12): a file that cannot be loaded is listed under `load_errors` and counted; on an
ASCII-only terminal a non-ASCII op name is printed with '?' and the report still holds it."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

GOOD = """
import torch
import gradviz

@gradviz.op(name="größe")
class Groesse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3.0

    @staticmethod
    def backward(ctx, g):
        return g * 3.0
"""


def test_load_error_in_report_and_ascii_terminal(tmp_path):
    good, bad, out = tmp_path / "good.py", tmp_path / "bad.py", tmp_path / "r.json"
    good.write_text(textwrap.dedent(GOOD), encoding="utf-8")
    bad.write_text("import torch\n\ndef broken(:\n    pass\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="ascii")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gradviz",
            "run",
            str(good),
            str(bad),
            "--framework",
            "torch",
            "--modes",
            "default,custom",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        encoding="ascii",
        errors="strict",
        timeout=240,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr  # a file could not be loaded
    assert "UnicodeEncodeError" not in proc.stderr
    assert "gr??e" in proc.stdout  # printed with replacement
    report = json.loads(out.read_text(encoding="utf-8"))
    [op] = report["ops"]
    assert op["name"] == "größe" and op["status"] == "ok"
    x = next(t for t in op["tensors"] if t["name"] == "x")
    assert x["verdict"] == "match" and x["stats"]["custom"]["max"] == 3.0
    [failed] = report["load_errors"]
    assert failed["file"] == str(bad) and failed["framework"] is None  # failed before torch
    assert failed["error"]["type"] == "SyntaxError"
    assert failed["error"]["where"].endswith("bad.py:3")
    assert failed["error"]["message"]
    assert report["summary"]["error"] == 1
