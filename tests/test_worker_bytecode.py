"""Bytecode caches around a worker: gradviz's own modules keep theirs (engine/own_bytecode.py),
a user's folder never gets a __pycache__, and a parent that writes no bytecode (-B) has workers
that write none either. Runs a copy of the gradviz package, so the checkout's caches play no part."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import gradviz

OP = """import torch
import gradviz
from helper import K


@gradviz.op(name="scale", inputs={"x": (4,)})
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * K

    @staticmethod
    def backward(ctx, g):
        return g * K
"""

DRIVE = """import sys
from gradviz.catalog import pair_ops, requests_for
from gradviz.engine import Engine
from gradviz.model import RunSettings
with Engine(["torch"]) as e:
    reqs = requests_for(pair_ops(e.load([sys.argv[1]])), ("torch",), RunSettings(modes=("custom",)))
    (r,) = e.run(reqs)
    print("GRAD", r.status, r.tensor("x").grads["custom"].tolist())
"""


def run_copy(tmp_path: Path, *flags: str) -> tuple[Path, Path]:
    pkg = tmp_path / "pkg"
    shutil.copytree(
        os.path.dirname(gradviz.__file__),
        pkg / "gradviz",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    user = tmp_path / "user"
    user.mkdir()
    (user / "helper.py").write_text("K = 3.0\n")
    (user / "op.py").write_text(OP)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(pkg)
    proc = subprocess.run(
        [sys.executable, *flags, "-c", DRIVE, str(user / "op.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "GRAD ok [3.0, 3.0, 3.0, 3.0]" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    return pkg / "gradviz", user


def test_worker_caches_gradviz_bytecode_and_none_of_the_users(tmp_path):
    package, user = run_copy(tmp_path)
    cached = {p.name.split(".")[0] for p in (package / "backends" / "__pycache__").glob("*.pyc")}
    assert {"runner", "torch_backend", "user_modules"} <= cached  # imported in the worker only
    assert not list(user.rglob("__pycache__"))  # helper.py was imported


def test_no_bytecode_anywhere_when_the_parent_writes_none(tmp_path):
    package, user = run_copy(tmp_path, "-B")
    assert not list(package.rglob("__pycache__"))
    assert not list(user.rglob("__pycache__"))
