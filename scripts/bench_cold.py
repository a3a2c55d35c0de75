"""Cold-run bench rows (issue 29): fresh `gradviz run` processes as a user meets them, each
interleaved with its baseline, the hand-written scripts/bench_plain.py (both frameworks, default +
custom, a matplotlib PNG; no numeric). Rows: one file holding a torch op and its TF twin
(scripts/bench_mixed_ops.py: each worker imports both frameworks), the same two ops in two files
(the built-in examples), and what the numeric mode adds at 10^6 elements in a cold run (per-op
`elapsed` of the JSON report with numeric minus without, built-in mul_weights). Used by
scripts/bench.py ("cold", "cold-numeric")."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLAIN = os.path.join(ROOT, "scripts", "bench_plain.py")
MIXED = os.path.join(ROOT, "scripts", "bench_mixed_ops.py")
EXAMPLES = [
    os.path.join(ROOT, "resources", "examples", f) for f in ("tutorial_torch.py", "tutorial_tf.py")
]
GV = [sys.executable, "-m", "gradviz", "run"]
NUMERIC_TARGET_S = 0.5


def timed_process(cmd: list[str], env: dict, timeout: float = 900) -> float:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-3000:]}")
    return dt


def ensure_matplotlib(env) -> str:
    ok = subprocess.run([sys.executable, "-c", "import matplotlib"], env=env, capture_output=True)
    if ok.returncode == 0:
        return ""
    print(
        "installing matplotlib for the cold-run baseline (pip install matplotlib)…",
        file=sys.stderr,
        flush=True,
    )
    p = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "matplotlib"],
        env=env,
        capture_output=True,
        text=True,
    )
    return "" if p.returncode == 0 else "matplotlib could not be installed: " + p.stderr[-300:]


def _runs(xs) -> str:
    return ", ".join(f"{x:.2f}" for x in xs)


def bench_cold(row, env: dict, tmp: str, reps: int) -> list[dict]:
    png = os.path.join(tmp, "cold.png")
    tail = [
        "--op",
        "mul_weights",
        "--shape",
        "200",
        "--modes",
        "default,custom,numeric",
        "--plot",
        png,
        "--quiet",
    ]
    cases = [
        ("one file holding a torch op and its TF twin", [MIXED], 0.7),
        ("two files, one per framework", EXAMPLES, 0.55),
    ]
    names = [
        f"cold `gradviz run`, {what}: 200 el, torch+tf, default+custom+numeric, PNG "
        "(vs plain script)"
        for what, _, _ in cases
    ]
    problem = ensure_matplotlib(env)
    times: dict = {"plain": [], **{n: [] for n in names}}
    for _ in range(reps):  # interleaved: drift in the machine's load hits all alike
        if not problem:
            times["plain"].append(
                timed_process([sys.executable, PLAIN, os.path.join(tmp, "plain.png")], env)
            )
        for name, (_, files, _) in zip(names, cases):
            times[name].append(timed_process(GV + files + tail, env))
    plain = statistics.median(times["plain"]) if times["plain"] else None
    note = f", plain {_runs(times['plain'])}" if plain else "; baseline skipped: " + problem
    return [
        row(
            name,
            statistics.median(times[name]),
            "s",
            plain,
            target,
            "ratio",
            note=f"runs gradviz {_runs(times[name])}{note}",
        )
        for name, (_, _, target) in zip(names, cases)
    ]


def bench_cold_numeric(row, env: dict, tmp: str, reps: int, n: int = 10**6) -> list[dict]:
    """Per framework: the op's `elapsed` with numeric minus without, each from a fresh process,
    the two alternating."""
    out = os.path.join(tmp, "cold-numeric.json")
    added: dict = {"torch": [], "tf": []}
    for _ in range(reps):
        elapsed = {}
        for modes in ("default,custom", "default,custom,numeric"):
            timed_process(
                GV
                + EXAMPLES  # torch and TF, as the row says (the examples hold JAX ops too)
                + [
                    "--op",
                    "mul_weights",
                    "--shape",
                    str(n),
                    "--modes",
                    modes,
                    "--json",
                    out,
                    "--quiet",
                ],
                env,
            )
            with open(out) as fh:
                ops = json.load(fh)["ops"]
            for op in ops:
                if op["status"] != "ok":
                    raise RuntimeError(f"{op['framework']} {modes}: {op.get('error')}")
            elapsed[modes] = {op["framework"]: op["elapsed"] for op in ops}
        for fw in added:
            added[fw].append(elapsed["default,custom,numeric"][fw] - elapsed["default,custom"][fw])
    return [
        row(
            f"cold `gradviz run` {n:.0e} el mul_weights, {fw}: what numeric adds to the op's "
            "elapsed",
            statistics.median(xs),
            "s",
            None,
            NUMERIC_TARGET_S,
            "max",
            note="runs " + _runs(xs),
        )
        for fw, xs in added.items()
    ]
