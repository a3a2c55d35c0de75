"""Bench rows for the contract checks (--checks): the run time of a 200-element op with every
check against the same op's plain run (default + custom + numeric), per framework, warm workers;
and each check alone, so the expensive one is named. Used by scripts/bench.py ("checks").
Plain and checked runs alternate, so drift in the machine's load hits both alike."""

from __future__ import annotations

import os
import statistics
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS = {"torch": ("tutorial_torch.py", "MulWeights"), "tf": ("tutorial_tf.py", "mul_weights")}
TARGET = 2.0  # every check at most doubles the op's run time


def bench_checks(row, reps: int) -> list[dict]:
    from gradviz.engine import Engine
    from gradviz.model import CHECKS, RunRequest, RunSettings

    variants = [(), CHECKS] + [(name,) for name in CHECKS]
    rows = []
    with Engine(tuple(OPS)) as engine:
        for fw, (file, qualname) in OPS.items():
            engine.workers[fw].wait_ready(300)
            path = os.path.join(ROOT, "resources", "examples", file)
            times: dict[tuple, list[float]] = {v: [] for v in variants}
            for i in range(reps + 1):  # the first round warms up (imports, traces)
                for checks in variants:
                    req = RunRequest(
                        path, qualname, fw, RunSettings(shape=(200,), checks=checks, timeout=600)
                    )
                    t0 = time.perf_counter()
                    res = engine.run_one(req)
                    dt = time.perf_counter() - t0
                    if res.status != "ok":
                        raise RuntimeError(f"{fw} {checks}: {res.error.one_line()}")
                    if i:
                        times[checks].append(dt)
            plain = statistics.median(times[()])
            every = times[CHECKS]
            rows.append(
                row(
                    f"contract checks {fw}, 200 el: all six vs the plain run "
                    "(default+custom+numeric)",
                    statistics.median(every),
                    "s",
                    plain,
                    TARGET,
                    "ratio",
                    note="runs " + ", ".join(f"{t:.2f}" for t in every),
                )
            )
            for name in CHECKS:
                rows.append(
                    row(
                        f"contract checks {fw}, 200 el: plain run + {name}",
                        statistics.median(times[(name,)]),
                        "s",
                        plain,
                    )
                )
    return rows
