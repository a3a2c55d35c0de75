"""A Keras Layer built as gradviz runs it: its weights created by one call on inputs of the
run's shape and dtype, under that dtype as the layer's own keras' floatx. Worker-only."""

from __future__ import annotations

import contextlib

import tensorflow as tf

from gradviz.backends.graphs import differentiable
from gradviz.backends.tf_op_kinds import keras_of

DTYPES = {"float32": tf.float32, "float64": tf.float64}


def build_layer(layer, plans, dtype, device) -> None:
    """Layers that create weights in build() get them by one call on inputs of the run's shape."""
    args = [
        tf.constant(p.values, dtype=DTYPES[dtype])
        if differentiable(p.values)
        else tf.constant(p.values)
        for p in plans
        if p.kind == "tensor"
    ]
    kwargs = {p.name: p.const for p in plans if p.kind == "const"}
    with tf.device(device), floatx(dtype, keras_of(type(layer))):
        layer(*args, **kwargs)


@contextlib.contextmanager
def floatx(dtype: str, keras):
    """Layers built inside use `dtype` for their weights, in the layer's own keras."""
    get, put = keras_switches(keras)
    old = [g() for g in get]
    for p in put:
        p(dtype)
    try:
        yield
    finally:
        for p, value in zip(put, old):
            p(value)


def keras_switches(keras) -> tuple[tuple, tuple]:
    """(getters, setters) of a keras' floatx and global dtype policy."""
    if hasattr(keras, "config") and hasattr(keras.config, "set_dtype_policy"):  # Keras 3
        return (
            (keras.config.floatx, keras.config.dtype_policy),
            (keras.config.set_floatx, keras.config.set_dtype_policy),
        )
    return (
        (keras.backend.floatx, keras.mixed_precision.global_policy),  # Keras 2
        (keras.backend.set_floatx, keras.mixed_precision.set_global_policy),
    )
