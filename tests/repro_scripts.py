"""Running a reproduction script as its users would (a fresh interpreter where gradviz cannot
be imported) and reading back the numbers it printed, for the repro tests."""

import os
import subprocess
import sys
from pathlib import Path

# gradviz blocked (None in sys.modules: `import gradviz` raises ImportError), then the script
RUN_WITHOUT_GRADVIZ = (
    "import sys, runpy; sys.modules['gradviz'] = None; "
    "runpy.run_path(sys.argv[1], run_name='__main__')"
)
# Below this a |custom - numeric| is the float64 finite differences' own rounding (~1e-16 *
# |loss| / 1e-6), which depends on the order the forward sums in: gradviz runs the forwards of
# an mlp or stack in batches (a batched matmul), the script one at a time.
ROUNDING_FLOOR = 5e-9


def run_script(path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GRADVIZ"))}
    proc = subprocess.run(
        [sys.executable, "-I", "-c", RUN_WITHOUT_GRADVIZ, str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=path.parent,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


def printed_rows(printed: str) -> dict[str, tuple[str, str]]:
    """tensor -> (|custom-default|, |custom-numeric|) as the script printed them."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("tensor "))
    return {
        m[0]: (m[2], m[3]) for m in (line.split() for line in lines[start + 1 :]) if len(m) == 4
    }


def reported(metrics: dict, key: str) -> str:
    """The report's number as gradviz's table prints it (3 significant digits); `metrics` as
    the JSON report has them (dicts) or as a comparison does (PairMetrics)."""
    m = metrics.get(key)
    err = m.get("max_abs_err") if isinstance(m, dict) else getattr(m, "max_abs_err", None)
    return "-" if err is None else f"{err:.3g}"


def same_number(printed: str, report: str) -> bool:
    """The table's digits, or two numbers both at the finite differences' rounding floor."""
    if printed == report:
        return True
    try:
        a, b = float(printed), float(report)
    except ValueError:
        return False
    return abs(a - b) <= ROUNDING_FLOOR and max(a, b) < 1e-6
