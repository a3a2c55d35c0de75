"""random_backward seeds TensorFlow without clearing its eager kernel cache only where no op that
the clear could change ran (checks/tf_seeds.py). A random op given an op seed of its own keeps
its stream in a cached kernel: only tf.random.set_seed's clear starts it again, so such a
backward is told random only when the pass that saw it is done again with set_seed. Run twice
in one worker: the second run finds the kernels of the first in the cache."""

from gradviz.model import CHECKS, RunSettings
from tests.op_runs import run

OPS = """
import tensorflow as tf


@tf.custom_gradient
def coin_with_op_seed(x):
    def grad(g):
        return g * tf.cast(tf.random.uniform(tf.shape(g), seed=3) < 0.5, g.dtype) * 2.0
    return tf.sign(x), grad


@tf.custom_gradient
def calm_square(x):
    def grad(g):
        return g * 2.0 * x
    return x * x, grad
"""


def test_an_op_seeded_random_backward_is_told_random_run_after_run(engine, tmp_path):
    path = tmp_path / "op_seeded_tf.py"
    path.write_text(OPS)
    for _ in range(2):
        res = run(engine, path, "coin_with_op_seed", "tf", RunSettings(checks=CHECKS))
        assert [c.name for c in res.checks] == list(CHECKS)
        for c in res.checks:
            assert c.status == "skip" and c.message.startswith("the custom backward is random"), c
        calm = run(engine, path, "calm_square", "tf", RunSettings(checks=CHECKS))
        assert not [c for c in calm.checks if "backward is random" in c.message]
        assert {c.status for c in calm.checks} >= {"pass"}
