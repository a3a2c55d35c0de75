"""TensorFlow's global seed for random_backward, set without clearing TF's eager kernel cache
where the clear changes nothing. Worker-only.

tf.random.set_seed(n) does three things in eager mode: it sets the global seed, restarts the
op-seed stream (context._rng = Random(n)) and clears the eager kernel cache, so that a stateful
random kernel (tf.random.uniform, with or without an op seed) starts its stream again. The clear
also throws away every other kernel: each op after it builds its kernel anew, which was most of
a TF checks run (two clears in random_backward: ~20 ms of the 30 ms the six checks added at 200
elements, and ~9 ms of the next run, whose same_random_draws found the seed changed). For ops
that never reach a stateful random kernel the clear has no effect on any value. So `seeding()`
sets the seed and the op-seed stream as set_seed does, leaves the cache alone, and watches every
op that runs (an op callback, this thread only, while random_backward's calls run): one that
is stateful (random ops, a tf.function call, tf.print: anything but reading and writing
variables) or unknown marks the pass `unsure`, and random_backward then does it again the old
way, with set_seed. After a sure pass TF's seed and op-seed stream are put back as they were
(as random_backward does with Python's and numpy's generators): nothing drew from them.
"""

from __future__ import annotations

import contextlib
import random

# stateful ops that touch no random state: reading and writing a variable
_NO_DRAWS = frozenset(
    {
        "ReadVariableOp",
        "AssignVariableOp",
        "AssignAddVariableOp",
        "AssignSubVariableOp",
        "VarHandleOp",
        "VarIsInitializedOp",
        "ResourceGather",
    }
)
_may_draw: dict[str, bool] = {}  # op type -> stateful and not in _NO_DRAWS (or unknown)


def _draws(op_type: str) -> bool:
    known = _may_draw.get(op_type)
    if known is None:
        from tensorflow.python.framework import op_def_registry

        op_def = op_def_registry.get(op_type)
        known = _may_draw[op_type] = (
            op_def is None or op_def.is_stateful
        ) and op_type not in _NO_DRAWS
    return known


class Seeding:
    """`seed(n)`: tf.random.set_seed(n) but for the kernel-cache clear; `unsure`: an op ran
    that a clear could have changed (the pass must be done again with set_seed)."""

    def __init__(self, context):
        self._context = context
        self.unsure = False

    def seed(self, n: int) -> None:
        self._context._seed = n
        self._context._rng = random.Random(n)

    def __call__(self, op_type, inputs, attrs, outputs, op_name=None, graph=None):
        if not self.unsure and _draws(op_type):
            self.unsure = True
        return None  # the op's outputs as they are


@contextlib.contextmanager
def seeding():
    """A Seeding for the block, or None where TF's internals are not as expected (then
    set_seed it is). TF's seed and op-seed stream are put back after a sure pass."""
    from tensorflow.python.eager import context as tf_context
    from tensorflow.python.framework import op_callbacks

    context = tf_context.context()
    if not (hasattr(context, "_rng") and hasattr(context, "_seed")):
        yield None
        return
    before = context._seed, context._rng
    watch = Seeding(context)
    op_callbacks.add_op_callback(watch)
    try:
        yield watch
    finally:
        op_callbacks.remove_op_callback(watch)
        if not watch.unsure:
            context._seed, context._rng = before
