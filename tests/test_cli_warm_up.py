"""`gradviz run` imports what it needs after the run (analysis, reports, Qt and the exporters
for --plot) on a thread of its own once the first worker is ready (gradviz/cli/warm_up.py)."""

import subprocess
import sys

CODE = """
import sys
from gradviz.cli.warm_up import WarmUp
from gradviz.engine.worker import WorkerState
late = WarmUp(plot=True)
late.join()                                   # the run is over: nothing starts after this
late.on_state(WorkerState("tf", "ready"))
print("LATE", late._thread is None, "PySide6.QtGui" in sys.modules)
with WarmUp(plot=True) as warm:
    warm.on_state(WorkerState("torch", "starting"))
    print("STARTING", warm._thread is None)
    warm.on_state(WorkerState("torch", "ready"))
    first = warm._thread
    warm.on_state(WorkerState("tf", "ready"))
    print("ONCE", first is not None and warm._thread is first)
print("IMPORTED", all(m in sys.modules for m in
      ("gradviz.app.analysis", "gradviz.report", "gradviz.qt.export", "PySide6.QtGui")))
"""


def test_warm_up_imports_once_from_the_first_ready_worker_and_never_after_join():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:4] == [
        "LATE True False",
        "STARTING True",
        "ONCE True",
        "IMPORTED True",
    ]
