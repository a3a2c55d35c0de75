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


# glibc's mallopt parameters
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory(limit: int) -> None:
    """Inside a worker: glibc's malloc keeps what a run frees for the next allocation. A numeric
    pass at 10^6 elements allocates and frees 8 MB tensors a hundred times; glibc gives such
    buffers mappings of their own at first (and trims a freed heap top above twice that bound
    once it has raised it), so each was faulted in again page by page: ~70k faults in the first
    run, ~2 us each on the VMs measured. Buffers up to 32 MiB now come from the heap and up to
    128 MiB of its free top is kept (1/16 of the worker's memory limit where that is less): at
    most that much more resident memory. Another C library: its allocator as it is."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # musl, macOS: their allocator as it is
        return
    keep = 128 << 20 if not limit else min(128 << 20, limit // 16)
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, keep)


def format_bytes(n: int) -> str:
    return f"{n / GIB:.3g} GiB" if n >= GIB else f"{n / 1024**2:.0f} MiB"
