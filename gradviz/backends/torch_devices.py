"""PyTorch's devices: which there are, and what a --device spec names. Worker-only."""

from __future__ import annotations

import torch


def devices() -> list[dict]:
    out = [{"name": "cpu", "kind": "cpu", "available": True, "reason": "", "label": "CPU"}]
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            out.append(
                {
                    "name": f"cuda:{i}",
                    "kind": "gpu",
                    "available": True,
                    "reason": "",
                    "label": torch.cuda.get_device_name(i),
                }
            )
    else:
        why = (
            "this torch is a CPU-only build"
            if torch.version.cuda is None
            else "no NVIDIA GPU or driver found (torch.cuda.is_available() is False)"
        )
        out.append(
            {
                "name": "cuda:0",
                "kind": "gpu",
                "available": False,
                "reason": why,
                "label": "CUDA GPU",
            }
        )
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        out.append(
            {"name": "mps", "kind": "gpu", "available": True, "reason": "", "label": "Apple GPU"}
        )
    return out


def resolve_device(spec: str) -> str:
    spec = (spec or "auto").strip()
    low = spec.lower()
    if low == "auto":
        return "cuda:0" if torch.cuda.is_available() else "cpu"
    if low in ("cpu", "/cpu:0", "cpu:0"):
        return "cpu"
    if low.startswith("/gpu:"):
        low = "cuda:" + low.split(":", 1)[1]
    if low == "cuda":
        low = "cuda:0"
    if low.startswith("cuda:"):
        index = int(low.split(":", 1)[1])
        if not torch.cuda.is_available():
            why = (
                "this torch is a CPU-only build"
                if torch.version.cuda is None
                else "torch.cuda.is_available() is False"
            )
            raise ValueError(f"device {spec} is not available in torch: {why}")
        if index >= torch.cuda.device_count():
            raise ValueError(
                f"device {spec} is not available in torch: only "
                f"{torch.cuda.device_count()} CUDA device(s)"
            )
        return low
    if low == "mps":
        return low
    raise ValueError(f"unknown device {spec!r}: use auto, cpu, cuda:N or /GPU:N")
