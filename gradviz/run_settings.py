"""The settings of a run (RunSettings) and the one way each field is written and read: the CLI's
flags, the settings file and the window's panel all go through these texts and parsers."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from gradviz.vocab import Mode

MODES = tuple(Mode)
GRAPHS = ("op", "seed", "mlp", "stack")
DEPTH_RANGE = (1, 64)  # layers of the stack graph (--depth)
# Input dtypes passed as they are and never differentiated (inputs= "dtype"; DESIGN.md)
FIXED_DTYPES = ("int64", "bool")


def fixed_dtype(dtype: str) -> bool:
    """An input's dtype that no mode differentiates: int64 and bool as asked, and any other
    integer one a framework ran them as (JAX without x64 holds int64 as int32)."""
    return dtype == "bool" or dtype.startswith(("int", "uint"))


DTYPES = ("float32", "float64")
# Contract checks (DESIGN.md "Contract checks"), in the order the terminal and the app show them.
CHECKS = ("double_backward", "noncontiguous_upstream", "autocast", "vmap", "compiled", "precision")


@dataclass(frozen=True)
class RunSettings:
    graph: str = "op"
    shape: tuple[int, ...] = (200,)
    dtype: str = "float32"
    seed: int = 0
    upstream: str = "ones"  # "ones" | "random" | "const:K"
    device: str = "auto"  # "auto" | "cpu" | "cuda:N" | "/GPU:N"
    modes: tuple[str, ...] = MODES
    timeout: float = 120.0  # seconds per op and framework
    depth: int = 4  # layers of the stack graph (ignored by the others)
    checks: tuple[str, ...] = ()  # contract checks to run after the modes (see CHECKS)
    input_range: tuple[float, float] = (-3.0, 3.0)  # float inputs drawn from [lo, hi) (--range)

    def with_(self, **changes) -> RunSettings:
        return replace(self, **changes)

    def as_dict(self) -> dict:
        return {
            "graph": self.graph,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "seed": self.seed,
            "upstream": self.upstream,
            "device": self.device,
            "modes": list(self.modes),
            "timeout": self.timeout,
            "depth": self.depth,
            "checks": list(self.checks),
            "range": list(self.input_range),
        }


def settings_texts(s: RunSettings) -> dict[str, object]:
    """`s` as the CLI's flags and the settings file write it, by field ("shape": "4x50",
    "range": "-3,3", "modes": "default,custom,numeric", "checks": "" for none); numbers stay
    numbers. `settings_texts(RunSettings())` is the one place the defaults are written out
    (the CLI's argparse defaults, the settings schema's and the panel's come from it)."""
    return {
        "graph": s.graph,
        "shape": "x".join(map(str, s.shape)),
        "dtype": s.dtype,
        "seed": s.seed,
        "upstream": s.upstream,
        "device": s.device,
        "modes": ",".join(s.modes),
        "timeout": s.timeout,
        "depth": s.depth,
        "checks": ",".join(s.checks),
        "range": ",".join(f"{v:g}" for v in s.input_range),
    }


def parse_range(text: str) -> tuple[float, float]:
    """'-6,6' -> (-6.0, 6.0). Raises ValueError with a readable message."""
    parts = [p.strip() for p in str(text).split(",")]
    try:
        lo, hi = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"range {text!r}: write LO,HI, e.g. -6,6") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"range {text!r}: LO must be below HI, both finite")
    return lo, hi


def parse_checks(text: str) -> tuple[str, ...]:
    """'all' | 'none' | 'NAME,...' -> check names in CHECKS order. Raises ValueError."""
    text = str(text).strip()
    if text == "all":
        return CHECKS
    if text in ("none", ""):
        return ()
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in CHECKS]
    if bad or not names:
        raise ValueError(
            f"checks {text!r}: use all, none or a comma-separated subset of " + ",".join(CHECKS)
        )
    return tuple(c for c in CHECKS if c in names)


def parse_shape(text: str) -> tuple[int, ...]:
    """'200' -> (200,), '4x50' -> (4, 50). Raises ValueError with a readable message."""
    parts = str(text).lower().replace("*", "x").replace(",", "x").split("x")
    try:
        shape = tuple(int(p) for p in parts if p.strip())
    except ValueError:
        raise ValueError(f"shape {text!r}: write sizes separated by x, e.g. 200 or 4x50") from None
    if not shape or any(s <= 0 for s in shape):
        raise ValueError(f"shape {text!r}: every size must be a positive integer")
    return shape


def parse_upstream(text: str) -> tuple[str, float]:
    """'ones' | 'random' | 'const:K' -> (kind, K)."""
    if text in ("ones", "random"):
        return text, 1.0
    if text.startswith("const:"):
        try:
            k = float(text.split(":", 1)[1])
        except ValueError:
            k = None
        if k is not None and not math.isfinite(k):  # the window, the CLI and the file alike
            raise ValueError(f"upstream {text}: the constant must be a finite number")
        if k is not None:
            return "const", k
    raise ValueError(f"upstream {text!r}: use ones, random or const:K (e.g. const:0.5)")
