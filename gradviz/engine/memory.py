"""How much memory a worker may use (GRADVIZ_WORKER_MEMORY) and how much it uses (Linux /proc)."""

from __future__ import annotations

import os

GIB = 1024**3


def memory_limit_from_env() -> int:
    """Bytes of resident memory one worker may use; 0 = no limit.

    GRADVIZ_WORKER_MEMORY: GiB ("6", "1.5"), or with a unit ("512M", "2G"), or "0"/"off".
    Default: half the machine's RAM, so the two workers together cannot exhaust it.
    RLIMIT_AS is not used: CUDA reserves far more address space than it ever touches."""
    raw = os.environ.get("GRADVIZ_WORKER_MEMORY", "").strip().lower()
    if raw in ("0", "off", "none", "no"):
        return 0
    given = _parse(raw) if raw else None
    if given is not None:
        return given
    # unreadable (memory_setting_problem() says so where gradviz starts): the default
    total = _mem_total()
    return total // 2 if total else 0


def _parse(raw: str):
    units = {"k": 1024, "m": 1024**2, "g": GIB, "t": 1024**4}
    scale = GIB
    if raw[-1:] == "b":
        raw = raw[:-1]
    if raw[-1:] in units:
        scale, raw = units[raw[-1]], raw[:-1]
    try:
        value = float(raw) * scale
    except ValueError:
        return None
    return int(value) if value == value and 0 <= value < float("inf") else None


def memory_setting_problem() -> str:
    """What is wrong with GRADVIZ_WORKER_MEMORY ("" when it is unset or readable)."""
    raw = os.environ.get("GRADVIZ_WORKER_MEMORY", "").strip().lower()
    if not raw or raw in ("0", "off", "none", "no") or _parse(raw) is not None:
        return ""
    return (
        f"GRADVIZ_WORKER_MEMORY={os.environ['GRADVIZ_WORKER_MEMORY']!r}: give GiB (6, 1.5), "
        "a size with a unit (512M, 2G), or 0 / off for no limit"
    )


def _mem_total() -> int:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def rss_bytes(pid: int) -> int:
    """Resident memory of a process (Linux /proc); 0 where unknown."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def format_bytes(n: int) -> str:
    return f"{n / GIB:.3g} GiB" if n >= GIB else f"{n / 1024**2:.0f} MiB"
