"""TensorFlow's devices: which there are, and what a --device spec names. Worker-only."""

from __future__ import annotations

import tensorflow as tf


def devices() -> list[dict]:
    out = [{"name": "/CPU:0", "kind": "cpu", "available": True, "reason": "", "label": "CPU"}]
    gpus = tf.config.list_logical_devices("GPU")
    for i, _ in enumerate(gpus):
        out.append(
            {
                "name": f"/GPU:{i}",
                "kind": "gpu",
                "available": True,
                "reason": "",
                "label": f"GPU {i}",
            }
        )
    if not gpus:
        why = (
            "this TensorFlow is built without CUDA (tensorflow-cpu)"
            if not tf.test.is_built_with_cuda()
            else "no GPU visible to TensorFlow"
        )
        out.append(
            {"name": "/GPU:0", "kind": "gpu", "available": False, "reason": why, "label": "GPU"}
        )
    return out


def resolve_device(spec: str) -> str:
    spec = (spec or "auto").strip()
    low = spec.lower()
    gpus = tf.config.list_logical_devices("GPU")
    if low == "auto":
        return "/GPU:0" if gpus else "/CPU:0"
    if low in ("cpu", "/cpu:0", "cpu:0"):
        return "/CPU:0"
    if low.startswith("cuda"):
        low = "/gpu:" + (low.split(":", 1)[1] if ":" in low else "0")
    if low.startswith("/gpu:"):
        index = int(low.split(":", 1)[1])
        if index >= len(gpus):
            why = (
                "this TensorFlow is built without CUDA (tensorflow-cpu)"
                if not tf.test.is_built_with_cuda()
                else f"{len(gpus)} GPU(s) visible"
            )
            raise ValueError(f"device {spec} is not available in tf: {why}")
        return f"/GPU:{index}"
    raise ValueError(f"unknown device {spec!r}: use auto, cpu, cuda:N or /GPU:N")
