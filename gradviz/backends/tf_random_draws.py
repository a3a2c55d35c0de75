"""The same draws of TensorFlow's global random ops in every mode of a run. Worker-only."""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.eager import context as tf_context

RANDOM_SEED = 20240601
_RESET: dict = {"state": None}  # TF's op-seed stream right after gradviz last reset it


def same_random_draws() -> None:
    """TF's global random state as right after a reset, for the forward about to run. A reset
    (tf.random.set_seed) also clears TF's eager kernel cache, so every op after it builds its
    kernel again (~2.3 ms per mode at 10^3, 4x a run's cost): it is done only when the op-seed
    stream moved since the last one (a forward drew from TF's global random ops, or the user's
    code set the seed), which a random forward always does. Random ops given an op seed of their
    own continue their stream across calls, in plain TF too, and are not reset."""
    ctx = tf_context.context()
    rng = getattr(ctx, "_rng", None)  # TF's op-seed stream (TF internals; else reset)
    if (
        rng is None
        or getattr(ctx, "_seed", None) != RANDOM_SEED
        or rng.getstate() != _RESET["state"]
    ):
        tf.random.set_seed(RANDOM_SEED)
        rng = getattr(ctx, "_rng", None)
        _RESET["state"] = rng.getstate() if rng is not None else None
