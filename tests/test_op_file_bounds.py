"""Op files are regular files of bounded size, read with a bound (issue 26, item 3): `gradviz
run /dev/zero` read the whole "file" in the parent until memory ran out, and a FIFO as an op
file blocked forever. Both, a file past the bound and a loop of links, are refused with a
message that says what the path is, before anything reads it; the parent's scan of a file that
the app was handed says the same instead of blocking."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradviz.import_scan import frameworks_used
from gradviz.module_files import OP_FILE_MAX, OpFileError, read_op_source

ROOT = Path(__file__).resolve().parent.parent


def _gradviz(*args, timeout=60):
    """`gradviz ...` in a fresh process; a read that blocks or never ends fails by the timeout."""
    return subprocess.run(
        [sys.executable, "-m", "gradviz", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
    )


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "ops.py"
    os.mkfifo(path)
    return path


def test_run_refuses_dev_zero(tmp_path):
    proc = _gradviz("run", "/dev/zero", "--json", tmp_path / "r.json")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "/dev/zero: a character device, not an op file" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_and_list_refuse_a_fifo(fifo):
    for cmd in ("run", "list"):
        proc = _gradviz(cmd, fifo)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert f"{fifo}: a FIFO (named pipe), not an op file" in proc.stderr


def test_a_link_loop_is_named_as_one(tmp_path):
    loop = tmp_path / "loop.py"
    loop.symlink_to(loop)
    proc = _gradviz("run", loop)
    assert proc.returncode == 2
    assert f"{loop}: a loop of symbolic links" in proc.stderr


def test_the_parents_scan_never_blocks_or_reads_past_the_bound(fifo, tmp_path):
    # what the app does with a file dropped on it: the parent scans its imports first
    frameworks, error = frameworks_used(str(fifo))
    assert frameworks == () and "a FIFO (named pipe), not an op file" in error.message
    frameworks, error = frameworks_used("/dev/zero")
    assert frameworks == () and "a character device" in error.message
    big = tmp_path / "big.py"
    with open(big, "wb") as fh:
        fh.truncate(OP_FILE_MAX + 1)  # sparse: no disk used
    with pytest.raises(OpFileError, match="more than an op file may hold"):
        read_op_source(str(big))
    assert "more than an op file may hold" in frameworks_used(str(big))[1].message
    small = tmp_path / "ok.py"
    small.write_text("import torch\n")
    assert read_op_source(str(small)) == b"import torch\n"
    assert frameworks_used(str(small)) == (("torch",), None)
