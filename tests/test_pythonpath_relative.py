"""An empty or relative PYTHONPATH entry never makes gradviz's own process import a module
lying in the current folder (issue 26, minor): `PYTHONPATH=:` put the folder on sys.path, and a
`numpy.py` there was imported by the parent."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("extra", ["", ".", "sub/.."])
def test_a_relative_pythonpath_entry_does_not_reach_the_current_folder(tmp_path, extra):
    marker = tmp_path / "planted"
    (tmp_path / "numpy.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise ImportError('the planted numpy.py')\n"
    )
    (tmp_path / "sub").mkdir()
    entry = tmp_path / "bin" / "gradviz"  # as pip's console script is
    entry.parent.mkdir()
    entry.write_text("import sys\nfrom gradviz.cli import main\nsys.exit(main(['--version']))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), extra]))
    proc = subprocess.run(
        [sys.executable, str(entry)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not marker.exists()
