"""JAX's devices: which there are, and what a --device spec names. Worker-only."""

from __future__ import annotations

import jax


def _gpus() -> list:
    try:
        return jax.devices("gpu")
    except RuntimeError:  # no GPU backend in this jaxlib (jax[cpu])
        return []


def devices() -> list[dict]:
    out = [{"name": "cpu", "kind": "cpu", "available": True, "reason": "", "label": "CPU"}]
    gpus = _gpus()
    for i, d in enumerate(gpus):
        out.append(
            {
                "name": f"cuda:{i}",
                "kind": "gpu",
                "available": True,
                "reason": "",
                "label": getattr(d, "device_kind", f"GPU {i}"),
            }
        )
    if not gpus:
        out.append(
            {
                "name": "cuda:0",
                "kind": "gpu",
                "available": False,
                "reason": "this jaxlib has no GPU backend (jax[cpu]); pip install "
                "'jax[cuda12]' for one",
                "label": "GPU",
            }
        )
    return out


def resolve_device(spec: str) -> str:
    """'cpu' or 'cuda:N' (the names torch uses; /GPU:N as TF spells it is taken too)."""
    spec = (spec or "auto").strip()
    low = spec.lower()
    gpus = _gpus()
    if low == "auto":
        return "cuda:0" if gpus else "cpu"
    if low in ("cpu", "/cpu:0", "cpu:0"):
        return "cpu"
    if low.startswith("/gpu:") or low.startswith("gpu"):
        low = "cuda:" + (low.split(":", 1)[1] if ":" in low else "0")
    if low == "cuda":
        low = "cuda:0"
    if low.startswith("cuda:"):
        index = int(low.split(":", 1)[1])
        if index >= len(gpus):
            why = (
                "this jaxlib has no GPU backend (jax[cpu])"
                if not gpus
                else f"only {len(gpus)} GPU(s)"
            )
            raise ValueError(f"device {spec} is not available in jax: {why}")
        return low
    raise ValueError(f"unknown device {spec!r}: use auto, cpu, cuda:N or /GPU:N")


def device_of(name: str):
    """The jax.Device a resolved name stands for."""
    if name.startswith("cuda:"):
        return _gpus()[int(name.split(":", 1)[1])]
    return jax.devices("cpu")[0]
