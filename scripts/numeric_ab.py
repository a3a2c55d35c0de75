"""Old vs new numeric reference in one process, interleaved: time and agreement.

`python scripts/numeric_ab.py FRAMEWORK N [COMMIT] [REPS]` runs mul_weights of the tutorial at N
elements in-process (no worker), modes default+custom+numeric with gradviz/backends/numeric.py as
of COMMIT (default de3d611, before issue 15) and as checked out, and default+custom alone, in turn.
Prints each run's seconds and the largest relative difference between the two numeric references
(per-element gradients, or the projections of the random directions).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
EXAMPLES = {"torch": ("tutorial_torch.py", "MulWeights"), "tf": ("tutorial_tf.py", "mul_weights")}


def old_numeric(commit: str):
    src = subprocess.run(
        ["git", "-C", ROOT, "show", f"{commit}:gradviz/backends/numeric.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(src)
    try:
        spec = importlib.util.spec_from_file_location("numeric_before", fh.name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.unlink(fh.name)
    return module


def main(argv) -> None:
    fw, n = argv[0], int(argv[1])
    commit = argv[2] if len(argv) > 2 else "de3d611"
    reps = int(argv[3]) if len(argv) > 3 else 2
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from gradviz.backends import load_backend, numeric, runner
    from gradviz.model import RunRequest, RunSettings

    old = old_numeric(commit)
    backend = load_backend(fw)
    f, q = EXAMPLES[fw]
    path = os.path.join(ROOT, "resources", "examples", f)
    times, results = {"before": [], "after": [], "no numeric": []}, {}
    for _ in range(reps):
        for label, module in (("before", old), ("after", numeric), ("no numeric", None)):
            runner.numeric = module or numeric
            modes = ("default", "custom") + (("numeric",) if module else ())
            req = RunRequest(path, q, fw, RunSettings(shape=(n,), modes=modes, timeout=600))
            t0 = time.perf_counter()
            res = backend.run(req)
            times[label].append(time.perf_counter() - t0)
            assert res.status == "ok" and "numeric" not in res.mode_errors, res
            results[label] = res
    runner.numeric = numeric
    for label, ts in times.items():
        print(f"{label:>10}: " + ", ".join(f"{t:.3f} s" for t in ts))
    worst = 0.0
    for a, b in zip(results["before"].tensors, results["after"].tensors):
        pairs = [(a.grads.get("numeric"), b.grads.get("numeric"))]
        if a.numeric is not None and a.numeric.method == "projection":
            pairs += [
                (a.numeric.projections[k], b.numeric.projections[k]) for k in a.numeric.projections
            ]
        for x, y in pairs:
            if x is not None:
                worst = max(worst, float(np.max(np.abs(x - y)) / (np.max(np.abs(x)) or 1.0)))
    print(f"largest relative difference, before vs after: {worst:.2g}")


if __name__ == "__main__":
    main(sys.argv[1:])
