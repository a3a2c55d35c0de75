"""Old vs new engine overhead through the real Engine, interleaved, with the results compared.

`python scripts/overhead_ab.py FRAMEWORK N [COMMIT] [REPS]` times `Engine.run_one` of the
tutorial's mul_weights at N elements, modes default+custom, as the bench's overhead row does, in
two parent processes at once: one runs gradviz as of COMMIT (default 0dfd3bc, before
backends/tf_arrays.py; exported with `git archive` into a private temporary folder), the other
this checkout; each has its own warm worker (a worker runs its parent's gradviz). They are asked
in turn, the order swapped every round, so load from other jobs falls on both alike. Every run's
values and gradients are hashed in the worker's parent and must be the same bytes for old and new.
Prints the median and every run of each, the worker-side `elapsed`, and the load average.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = {"torch": ("tutorial_torch.py", "MulWeights"), "tf": ("tutorial_tf.py", "mul_weights")}


def digest(res) -> str:
    """sha256 of every value and gradient of a result, in a fixed order."""
    h = hashlib.sha256()
    for t in sorted(res.tensors, key=lambda t: t.name):
        for key, arr in [("value", t.value)] + sorted(t.grads.items()):
            h.update(f"{t.name}/{key}/{arr.dtype}/{arr.shape}".encode())
            h.update(memoryview(np.ascontiguousarray(arr)).cast("B"))  # no copy
    return h.hexdigest()


def serve(framework: str) -> None:
    """One parent: an Engine for `framework`; each line of stdin is a size N to run."""
    import gradviz
    from gradviz.engine import Engine
    from gradviz.model import RunRequest, RunSettings

    f, q = EXAMPLES[framework]
    with Engine((framework,)) as engine:
        engine.workers[framework].wait_ready(300)
        print(json.dumps({"gradviz": os.path.dirname(gradviz.__file__)}), flush=True)
        for line in sys.stdin:
            req = RunRequest(
                os.path.join(ROOT, "resources", "examples", f),
                q,
                framework,
                RunSettings(shape=(int(line),), modes=("default", "custom"), timeout=600),
            )
            t0 = time.perf_counter()
            res = engine.run_one(req)
            total = time.perf_counter() - t0
            if res.status != "ok":
                raise SystemExit(f"{framework}: {res.error.one_line()}")
            print(
                json.dumps({"total": total, "elapsed": res.elapsed, "digest": digest(res)}),
                flush=True,
            )
            del res


def start(folder: str, framework: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=folder)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--serve", framework],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=folder,
    )
    ready = json.loads(proc.stdout.readline())
    if not ready["gradviz"].startswith(folder):
        raise SystemExit(f"{folder}: the parent imported gradviz from {ready['gradviz']}")
    return proc


def main(argv: list[str]) -> None:
    framework, n = argv[0], int(argv[1])
    commit = argv[2] if len(argv) > 2 else "0dfd3bc"
    reps = int(argv[3]) if len(argv) > 3 else 8
    old = tempfile.mkdtemp(prefix="gradviz-ab-")
    procs = {}
    try:
        archive = subprocess.run(
            ["git", "-C", ROOT, "archive", commit, "gradviz"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", old], input=archive, check=True)
        procs = {"before": start(old, framework), "after": start(ROOT, framework)}
        runs = {k: [] for k in procs}
        loads = []
        for i in range(reps + 1):  # the first round warms this size up: not counted
            got = {}
            for k in list(procs) if i % 2 else list(procs)[::-1]:
                procs[k].stdin.write(f"{n}\n")
                procs[k].stdin.flush()
                got[k] = json.loads(procs[k].stdout.readline())
            if got["before"]["digest"] != got["after"]["digest"]:
                raise SystemExit(f"round {i}: the results differ between {commit} and now")
            if i:
                for k in procs:
                    runs[k].append(got[k])
            loads.append(os.getloadavg()[0])
        print(
            f"{framework} {n} el, default+custom, {reps} rounds; every result byte-identical; "
            f"load average {min(loads):.1f}-{max(loads):.1f}"
        )
        for k, rs in runs.items():
            total = [r["total"] for r in rs]
            inside = statistics.median(r["elapsed"] for r in rs)
            label = f"{k} ({commit})" if k == "before" else k
            print(
                f"  {label:18s} run_one median {statistics.median(total) * 1000:7.1f} ms, in the "
                f"worker {inside * 1000:7.1f} ms; runs {', '.join(f'{t * 1000:.0f}' for t in total)}"
            )
    finally:
        for proc in procs.values():
            proc.stdin.close()
            proc.wait(60)
        shutil.rmtree(old, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2])
    else:
        main(sys.argv[1:])
