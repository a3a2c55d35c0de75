"""The numeric reference's batched forwards in TensorFlow: many perturbations of one leaf in
one compiled call. Worker-only."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from gradviz.backends.graphs import leaf_array
from gradviz.backends.tf_numeric_kit import F


def batch_evaluator(graph, built, device, base_leaves: dict, shapes: dict):
    """losses(name, deltas[k, ...]): the loss for k perturbations of one leaf, parameter or
    intermediate, in one compiled call (eager TensorFlow pays ~1 ms per forward; the numeric
    reference needs hundreds). Every name in `shapes` is an input of the one traced function
    (zeros where not perturbed), so the trace is shared. Raises where the forward cannot be
    compiled (numpy in it, ...): the caller then evaluates one perturbation at a time."""
    names = sorted(shapes)
    variables = {n: v for n, v in built.params().items() if n in shapes}

    def one(row):
        # Parameters are perturbed in place, so iterations run one at a time after the assign.
        assigns = [variables[n].assign(base_vars[n] + row[n]) for n in variables]
        with tf.control_dependencies(assigns):
            leaves = {n: base[n] + row[n] if n in row else tf.identity(base[n]) for n in base}

            def rec(name, t, role):
                return t + row[name] if name in row else t

            return tf.cast(graph.forward(leaves, built.call_op, rec, F), tf.float64)

    @tf.function(autograph=False, reduce_retracing=True)
    def many(rows):
        out = tf.map_fn(
            one,
            rows,
            fn_output_signature=tf.float64,
            parallel_iterations=1 if variables else 16,
        )
        with tf.control_dependencies([out]):
            restores = [v.assign(base_vars[n]) for n, v in variables.items()]
        with tf.control_dependencies(restores):
            return tf.identity(out)

    with tf.device(device):
        base = {n: tf.constant(leaf_array(v)) for n, v in base_leaves.items()}
        base_vars = {n: tf.constant(v.numpy()) for n, v in variables.items()}

    def losses(name: str, deltas: np.ndarray) -> np.ndarray:
        k = deltas.shape[0]
        with tf.device(device):
            rows = {
                n: tf.constant(
                    deltas if n == name else np.zeros((k,) + shapes[n]), dtype=tf.float64
                )
                for n in names
            }
            return many(rows).numpy()

    return losses
