"""Code run in a python of its own: the test process never imports a framework."""

import subprocess
import sys
import textwrap


def in_fresh_process(code: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
