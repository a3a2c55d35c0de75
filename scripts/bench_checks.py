"""Bench rows for the contract checks (--checks): the run time of a 200-element op with every
check against the same op's plain run (default + custom + numeric), per framework, warm workers;
and each check alone, so the expensive one is named. Used by scripts/bench.py ("checks")."""
from __future__ import annotations

import os
import statistics
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS = {"torch": ("tutorial_torch.py", "MulWeights"), "tf": ("tutorial_tf.py", "mul_weights")}
TARGET = 2.0        # every check at most doubles the op's run time


def bench_checks(row, reps: int) -> list[dict]:
    from gradviz.engine import Engine
    from gradviz.model import CHECKS, RunRequest, RunSettings
    rows = []
    with Engine(tuple(OPS)) as engine:
        for fw, (file, qualname) in OPS.items():
            engine.workers[fw].wait_ready(300)
            path = os.path.join(ROOT, "resources", "examples", file)

            def timed(checks) -> list[float]:
                req = RunRequest(path, qualname, fw, RunSettings(shape=(200,), checks=checks,
                                                                 timeout=600))
                times = []
                for i in range(reps + 1):       # the first run warms up (imports, first trace)
                    t0 = time.perf_counter()
                    res = engine.run_one(req)
                    dt = time.perf_counter() - t0
                    if res.status != "ok":
                        raise RuntimeError(f"{fw} {checks}: {res.error.one_line()}")
                    if i:
                        times.append(dt)
                return times

            plain = statistics.median(timed(()))
            every = timed(CHECKS)
            rows.append(row(f"contract checks {fw}, 200 el: all six vs the plain run "
                            "(default+custom+numeric)", statistics.median(every), "s", plain,
                            TARGET, "ratio", note="runs " + ", ".join(f"{t:.2f}" for t in every)))
            for name in CHECKS:
                alone = statistics.median(timed((name,)))
                rows.append(row(f"contract checks {fw}, 200 el: plain run + {name}", alone, "s",
                                plain))
    return rows
