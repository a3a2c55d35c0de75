"""The caller's tensors as numpy, and what the run takes from them: its dtype, device and shape.

Tensors come as the test built them (torch, TensorFlow, numpy, JAX); they are turned into numpy
by what they offer (`detach`, `numpy`), never by importing their framework here. The run uses
them as they are: the values exactly (float32 survives float64 and back), the dtype as the run's
--dtype, the device as its --device, and the shape of the first one as the shape of every
argument not given (a Keras layer builds its weights for it too).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.model import DTYPES


def as_array(name: str, value) -> Any:
    """A tensor or array as numpy (a copy, on the host); a shape tuple, a spec dict or a plain
    list is left as it is (gradviz.op's inputs= reads those)."""
    if isinstance(value, (tuple, dict, list)):
        return value
    if hasattr(value, "detach"):  # torch: leave autograd and the device behind
        value = value.detach().cpu()
        if str(getattr(value, "dtype", "")) == "torch.bfloat16":
            raise ValueError(
                f"inputs[{name!r}] is bfloat16: gradviz runs float32 or float64 "
                "(the autocast check covers bfloat16)"
            )
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()  # torch (after detach), tf.Tensor, tf.Variable
    return np.array(value, copy=True)


def run_dtype(arrays: dict, asked: str | None) -> str:
    """The float dtype every float input shares (the run's dtype), or `asked` when none is
    given; a float input of another dtype than `asked`, or of two dtypes, is refused rather than
    silently cast."""
    found = {
        n: a.dtype.name
        for n, a in arrays.items()
        if isinstance(a, np.ndarray) and a.dtype.kind == "f"
    }
    kinds = set(found.values())
    bad = {n: d for n, d in found.items() if d not in DTYPES}
    if bad:
        raise ValueError(f"gradviz runs ops in float32 or float64: {_list(bad)}")
    if len(kinds) > 1:
        raise ValueError(
            f"the float inputs have different dtypes ({_list(found)}): gradviz runs "
            "an op in one dtype; give them one"
        )
    if asked is not None:
        if kinds and kinds != {asked}:
            raise ValueError(
                f"dtype={asked!r}, but the inputs are {_list(found)}: cast them, or "
                "leave dtype out to run in theirs"
            )
        return asked
    return kinds.pop() if kinds else "float32"


def run_device(values: dict) -> str | None:
    """The device the given tensors sit on, as --device writes it ("cpu", "cuda:N", "/GPU:N");
    None when none says (numpy arrays)."""
    found = {n: d for n, d in ((n, _device(v)) for n, v in values.items()) if d}
    if len(set(found.values())) > 1:
        raise ValueError(f"the inputs are on different devices ({_list(found)})")
    return next(iter(found.values()), None)


def _device(value) -> str:
    dev = getattr(value, "device", None)
    if dev is None or isinstance(value, np.ndarray):
        return ""
    text = str(dev)
    if text.startswith("/") or ":GPU:" in text or ":CPU:" in text:  # TensorFlow
        kind, _, index = text.rpartition("device:")[2].partition(":")
        return "cpu" if kind.upper() == "CPU" else f"/GPU:{index or 0}"
    return text if text.startswith("cuda") or text == "cpu" else ""


def _list(named: dict) -> str:
    return ", ".join(f"{n} {d}" for n, d in named.items())
