"""gradviz benchmarks: `python scripts/bench.py [--quick] [--json PATH] [--markdown]`.

Prints one table (row, value, baseline, ratio, target, met?) and writes docs/bench.json. Every
value is the median of several runs; a "baseline" is measured in the same invocation. Rows that
need a fresh process (window start, cold run) are timed from just before Popen to the child's
own report, so interpreter start and imports count. Qt runs offscreen (QT_QPA_PLATFORM=offscreen
unless already set) with a throw-away settings directory, so saved window state plays no part.
gradviz is byte-compiled first, as `pip install` does (compile_gradviz).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
CHILD = os.path.join(ROOT, "scripts", "bench_child.py")
from bench_checks import bench_checks  # noqa: E402 - scripts/ is this script's own folder
from bench_cold import bench_cold, bench_cold_numeric  # noqa: E402

MIB = 1024 * 1024


def child_env(tmp: str) -> dict:
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["XDG_CONFIG_HOME"] = os.path.join(tmp, "config")  # fresh settings
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    return env


def compile_gradviz() -> None:
    """Byte-compile gradviz as `pip install` does: a checkout run with PYTHONDONTWRITEBYTECODE
    set (as some shells and CI set it) would otherwise compile every gradviz module from source
    in every fresh process, while torch, TensorFlow and pyqtgraph load the bytecode pip wrote."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "gradviz")],
        check=True,
        capture_output=True,
    )


def run_child(args: list[str], env: dict, timeout: float = 900) -> tuple[dict, float]:
    """Run bench_child.py; returns (its BENCH json, epoch time just before it was started)."""
    t0 = time.time()
    p = subprocess.run(
        [sys.executable, CHILD, *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    for line in p.stdout.splitlines():
        if line.startswith("BENCH "):
            return json.loads(line[6:]), t0
    raise RuntimeError(
        f"bench_child {' '.join(args)} failed (exit {p.returncode}):\n"
        f"{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    )


def med(xs) -> float:
    return statistics.median(xs)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- rows ---------------------------------------------------------------------------------------
def row(name, value, unit, baseline=None, target=None, kind=None, note=""):
    """kind: "ratio" (target applies to value/baseline), "max" (target applies to value), None."""
    ratio = value / baseline if baseline not in (None, 0) and value is not None else None
    met = None
    if target is not None and value is not None:
        met = (ratio <= target) if kind == "ratio" else (value <= target)
    return {
        "row": name,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "ratio": ratio,
        "target": target,
        "target_kind": kind,
        "met": met,
        "note": note,
    }


def bench_window(env, reps):
    app, empty = [], []
    for _ in range(reps):  # interleaved, so drift in machine load hits both alike
        r, t0 = run_child(["window-empty"], env)
        empty.append(r["shown"] - t0)
        r, t0 = run_child(["window-app"], env)
        app.append(r["shown"] - t0)
    return [
        row(
            "window shown (gradviz vs empty PySide6+pyqtgraph window)",
            med(app),
            "s",
            med(empty),
            1.5,
            "ratio",
            note=f"runs app {fmt_list(app)}, empty {fmt_list(empty)}",
        )
    ]


def bench_warm(env, reps):
    # the app's default modes first (the target), then without numeric to show what it costs
    specs = [
        "200",
        "1000000",
        "200:default+custom",
        "1000000:default+custom",
        "200:default+custom+numeric:all",
    ]
    r, _ = run_child(["gui-warm", ",".join(specs), str(reps)], env, timeout=1800)
    rows = []
    for spec in specs:
        s = r["sizes"][spec]
        n = int(spec.split(":")[0])
        if spec.endswith(":all"):
            rows.append(
                row(
                    f"warm re-run in app, all {s['ops']} example ops, 200 el, "
                    f"{'+'.join(s['modes'])}: Run to everything painted",
                    s["done_median_s"],
                    "s",
                    target=0.300,
                    kind="max",
                    note=f"runs {fmt_list(s['done_runs'])}",
                )
            )
            continue
        label = f"warm re-run in app, {'200 el' if n == 200 else '1M el'}, torch+tf, {'+'.join(s['modes'])}"
        if "numeric" in s["modes"]:
            target = 0.150 if n == 200 else None
            rows.append(
                row(
                    f"{label}: Run to custom/default plots painted",
                    s["first_median_s"],
                    "s",
                    target=target,
                    kind="max" if target else None,
                    note=f"runs {fmt_list(s['first_runs'])}; "
                    f"{s['partial_results']:g} partial results per run",
                )
            )
            target = 2.0 if n > 200 else None
            rows.append(
                row(
                    f"{label}: Run to numeric column filled",
                    s["full_median_s"],
                    "s",
                    target=target,
                    kind="max" if target else None,
                    note=f"runs {fmt_list(s['full_runs'])}",
                )
            )
        else:
            rows.append(
                row(
                    f"{label}: Run to plots painted",
                    s["full_median_s"],
                    "s",
                    note=f"runs {fmt_list(s['full_runs'])}",
                )
            )
    rows.append(row("peak memory, GUI process (after the warm runs)", r["gui_peak_mib"], "MiB"))
    for fw, mib in sorted(r["workers_peak_mib"].items()):
        rows.append(row(f"peak memory, {fw} worker (after the warm runs)", mib, "MiB"))
    return rows


def devices_for(engine) -> dict:
    """{framework: [device, ...]}: cpu always, plus the first GPU where the framework sees one."""
    out = {}
    for fw, info in engine.devices().items():
        gpus = [d["name"] for d in info["devices"] if d["kind"] == "gpu" and d["available"]]
        out[fw] = ["cpu"] + gpus[:1]
    return out


def bench_numeric(env, reps, n=10**6):
    """What the numeric reference adds to one op: the per-op `elapsed` with and without it,
    interleaved, with warm workers (the issue's figure: `--modes default,custom,numeric` vs
    `--modes default,custom`)."""
    from gradviz.engine import Engine
    from gradviz.model import RunRequest, RunSettings

    qual = {"torch": ("tutorial_torch.py", "MulWeights"), "tf": ("tutorial_tf.py", "mul_weights")}
    rows = []
    with Engine(("torch", "tf")) as engine:
        for w in engine.workers.values():
            w.wait_ready(300)
        for fw, devices in devices_for(engine).items():
            f, q = qual[fw]
            for device in devices:

                def req(modes, f=f, q=q, fw=fw, device=device):  # bound now: called in this pass
                    return RunRequest(
                        os.path.join(ROOT, "resources", "examples", f),
                        q,
                        fw,
                        RunSettings(shape=(n,), modes=modes, device=device, timeout=600),
                    )

                with_num, without = [], []
                for i in range(reps + 1):  # the first pair warms this size up
                    for modes, into in (
                        (("default", "custom"), without),
                        (("default", "custom", "numeric"), with_num),
                    ):
                        res = engine.run_one(req(modes))
                        if res.status != "ok" or "numeric" in res.mode_errors:
                            raise RuntimeError(f"{fw} {device}: {res.error or res.mode_errors}")
                        if i:
                            into.append(res.elapsed)
                added = med(with_num) - med(without)
                rows.append(
                    row(
                        f"numeric reference added, {fw} {device}, mul_weights 10^6 el "
                        "(per-op elapsed with numeric minus without)",
                        added,
                        "s",
                        med(without),
                        1.0,
                        "max",
                        note=f"with {fmt_list(with_num)}, without {fmt_list(without)}",
                    )
                )
    return rows


def bench_overhead(env, sizes, reps):
    from gradviz.engine import Engine
    from gradviz.model import RunRequest, RunSettings

    qual = {"torch": ("tutorial_torch.py", "MulWeights"), "tf": ("tutorial_tf.py", "mul_weights")}
    bare = {}
    for fw in ("torch", "tf"):
        bare[fw], _ = run_child(
            ["bare", fw, ",".join(map(str, sizes)), str(reps)], env, timeout=1800
        )
    rows = []
    with Engine(("torch", "tf")) as engine:
        for fw in ("torch", "tf"):
            engine.workers[fw].wait_ready(300)
        for fw, devices in devices_for(engine).items():
            f, q = qual[fw]
            for device in devices:
                where = "" if device == "cpu" else f" {device}"
                for n in sizes:
                    req = RunRequest(
                        os.path.join(ROOT, "resources", "examples", f),
                        q,
                        fw,
                        RunSettings(
                            shape=(n,), modes=("default", "custom"), device=device, timeout=600
                        ),
                    )
                    times, inside = [], []
                    # the small size is the fixed cost per request: more repetitions
                    for i in range((reps * 4 if n == min(sizes) else reps) + 1):
                        t0 = time.perf_counter()
                        res = engine.run_one(req)
                        dt = time.perf_counter() - t0
                        if res.status != "ok":
                            raise RuntimeError(f"{fw} {n}: {res.error.one_line()}")
                        if i:  # the first run warms this size up, as in bare
                            times.append(dt)
                            inside.append(res.elapsed)
                    top = n == max(sizes)
                    bare_s = bare[fw][str(n)] if not where else None
                    rows.append(
                        row(
                            f"engine overhead {fw}{where}, 10^{len(str(n)) - 1} el, "
                            "default+custom (engine.run_one vs bare fwd+bwd)",
                            med(times),
                            "s",
                            bare_s,
                            3.0 if top and bare_s else None,
                            "ratio" if top and bare_s else None,
                            note=f"runs {fmt_list(times)}",
                        )
                    )
                    if n == min(sizes) and not where:
                        rows.append(
                            row(
                                f"fixed cost of one request {fw}, 10^{len(str(n)) - 1} el "
                                "(engine.run_one minus bare fwd+bwd)",
                                med(times) - bare_s,
                                "s",
                                target=0.003,
                                kind="max",
                                note=f"of which inside the worker's run (elapsed) "
                                f"{fmt(med(inside), 's')}, messages and waking the "
                                f"two processes {fmt(med(times) - med(inside), 's')}",
                            )
                        )
    return rows


def bench_redraw(env, reps):
    r, _ = run_child(["redraw", str(reps)], env)
    what = f"{r['columns']} columns x {r['rows']} tensors x 1M el"
    return [
        row(
            f"grid redraw, {what}: background preparation (compare + decimate, not on the GUI thread)",
            r["prepare_median_s"],
            "s",
            note=f"runs {fmt_list(r['prepare_runs'])}",
        ),
        row(
            f"grid redraw, {what}: GUI thread (set_data + paint)",
            r["median_s"],
            "s",
            target=0.300,
            kind="max",
            note=f"runs {fmt_list(r['runs'])}; first draw (plots created) {r['first_s']:.3f} s; "
            f"{r['plots']} plots",
        ),
        row(
            f"grid redraw, {what}: torch-vs-tf parity (background thread in the window)",
            r["parity_median_s"],
            "s",
            note=f"runs {fmt_list(r['parity_runs'])}",
        ),
        row(
            f"grid redraw, {what}: numbers table fill (GUI thread)",
            r["table_median_s"],
            "s",
            note=f"runs {fmt_list(r['table_runs'])}",
        ),
    ]


def bench_export(env, tmp, reps):
    r, _ = run_child(["export", str(reps), tmp], env, timeout=1800)
    rows = []
    for ext in ("png", "svg", "pdf"):
        e = r[ext]
        rows.append(
            row(f"export {ext.upper()}, 1M el, 3 tensors x 4 columns: time", e["median_s"], "s")
        )
        rows.append(
            row(
                f"export {ext.upper()}, 1M el, 3 tensors x 4 columns: file size",
                e["bytes"] / MIB,
                "MiB",
                target=2.0 if ext == "svg" else None,
                kind="max" if ext == "svg" else None,
            )
        )
    return rows


# --- output -------------------------------------------------------------------------------------
def fmt_list(xs) -> str:
    return ", ".join(f"{x:.3f}" for x in xs)


def fmt(v, unit="") -> str:
    if v is None:
        return "—"
    if unit == "MiB":
        return f"{v:.1f} MiB"
    if unit == "s":
        if v < 0.01:
            return f"{v * 1000:.2f} ms"
        return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s"
    return f"{v:.3g}"


def target_text(r) -> str:
    if r["target"] is None:
        return "—"
    if r["target_kind"] == "ratio":
        return f"≤ {r['target']:g}×"
    return f"≤ {fmt(r['target'], r['unit'])}"


def table(rows, markdown: bool) -> str:
    head = ["row", "value", "baseline", "ratio", "target", "met?"]
    body = [
        [
            r["row"],
            fmt(r["value"], r["unit"]),
            fmt(r["baseline"], r["unit"]),
            "—" if r["ratio"] is None else f"{r['ratio']:.2f}×",
            target_text(r),
            {True: "yes", False: "NO", None: "—"}[r["met"]],
        ]
        for r in rows
    ]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines)
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)) for b in body]
    return "\n".join(lines)


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu
            )
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            mem = f"{int(fh.readline().split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    versions = {}
    for mod in ("numpy", "PySide6", "pyqtgraph"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            versions[mod] = "missing"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "os": platform.platform(),
        "python": platform.python_version(),
        "qt_platform": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        **versions,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--quick", action="store_true", help="fewer repetitions and sizes (a few minutes)"
    )
    p.add_argument(
        "--json",
        default=None,
        help="where to write every repetition (default: "
        "docs/bench.json, and only for a full run, so a partial run cannot replace it)",
    )
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.add_argument(
        "--only",
        default="",
        help="comma-separated: window,cold,cold-numeric,warm,numeric,overhead,redraw,export,checks",
    )
    args = p.parse_args(argv)
    reps = 3 if args.quick else 5
    sizes = [10**3, 10**5, 10**7] if args.quick else [10**3, 10**4, 10**5, 10**6, 10**7]
    only = set(filter(None, args.only.split(",")))
    rows, errors, loads = [], {}, {}
    compile_gradviz()
    with tempfile.TemporaryDirectory(prefix="gradviz-bench-") as tmp:
        env = child_env(tmp)
        steps = [
            ("window", lambda: bench_window(env, reps)),
            ("cold", lambda: bench_cold(row, env, tmp, reps)),
            ("cold-numeric", lambda: bench_cold_numeric(row, env, tmp, reps)),
            ("warm", lambda: bench_warm(env, reps)),
            ("numeric", lambda: bench_numeric(env, reps)),
            ("overhead", lambda: bench_overhead(env, sizes, reps)),
            ("redraw", lambda: bench_redraw(env, reps)),
            ("export", lambda: bench_export(env, tmp, 1 if args.quick else 3)),
            ("checks", lambda: bench_checks(row, reps)),
        ]
        for name, step in steps:
            if only and name not in only:
                continue
            log(f"bench: {name}…")
            t0, load0 = time.perf_counter(), os.getloadavg()[0]
            try:
                rows += step()
            except Exception as exc:  # noqa: BLE001 - one broken row must not hide the others
                errors[name] = f"{type(exc).__name__}: {exc}"
                rows.append(
                    row(
                        f"{name}: NOT MEASURED ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})",
                        None,
                        "",
                    )
                )
            # timings on a shared machine mean little without the load beside them
            loads[name] = (round(load0, 2), round(os.getloadavg()[0], 2))
            log(f"bench: {name} took {time.perf_counter() - t0:.0f} s, load {loads[name]}")
    info = {
        "machine": machine(),
        "quick": args.quick,
        "repetitions": reps,
        "rows": rows,
        "errors": errors,
        "load_average": loads,  # step -> 1-minute load average at its start and end
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    out = args.json or (None if only else os.path.join(ROOT, "docs", "bench.json"))
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as fh:
            json.dump(info, fh, indent=1)
    m = info["machine"]
    print(
        f"machine: {m['cpu']}, {m['cores']} cores, {m['memory']}, {m['os']}, Python {m['python']}, "
        f"Qt platform {m['qt_platform']}; median of {reps} runs"
        + (" (--quick)" if args.quick else "")
    )
    print(table(rows, args.markdown))
    print(
        "load average (1 min) at the start and end of each step: "
        + ", ".join(f"{k} {a:.1f}-{b:.1f}" for k, (a, b) in loads.items())
    )
    for name, err in errors.items():
        print(f"\n{name} failed:\n{err}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
