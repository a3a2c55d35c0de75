"""The seeded streams gradviz draws from, by tensor name (numpy only): the same numbers in both
frameworks' workers, and in the parent where a reproduction script writes them out (repro.py)."""

from __future__ import annotations

import zlib

import numpy as np

from gradviz.model import RunSettings, parse_upstream


def rng_for(seed: int, name: str) -> np.random.Generator:
    """One seeded stream per tensor name: both frameworks draw identical numbers."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(name.encode())])


def input_draw(
    seed: int, name: str, shape: tuple[int, ...], bounds: tuple[float, float] = (-3.0, 3.0)
) -> np.ndarray:
    """A float input's seeded values (float64) where nothing else gives them (--range)."""
    return rng_for(seed, "input:" + name).uniform(bounds[0], bounds[1], size=shape)


def param_draw(seed: int, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A trainable parameter's seeded values (float64): positive and distinct, since user
    parameters are often scales or step sizes."""
    return rng_for(seed, "param:" + name).uniform(0.5, 1.5, size=shape)


def upstream_values(settings: RunSettings, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """The op graph's weight of output `name` in its loss, sum(upstream * out) (--upstream)."""
    kind, k = parse_upstream(settings.upstream)
    if kind == "random":
        return rng_for(settings.seed, "upstream:" + name).standard_normal(shape)
    return np.full(shape, 1.0 if kind == "ones" else k)


def dense_weight(seed: int, name: str, d: int) -> np.ndarray:
    """A dense layer's (d, d) weight of the mlp and stack graphs: standard normal / sqrt(d)."""
    return rng_for(seed, "param:" + name).standard_normal((d, d)) * (1.0 / np.sqrt(d))


def dense_bias(seed: int, name: str, d: int) -> np.ndarray:
    """A dense layer's (d,) bias of the mlp and stack graphs: standard normal * 0.1."""
    return rng_for(seed, "param:" + name).standard_normal((d,)) * 0.1


def mlp_target(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """The mlp graph's regression target."""
    return rng_for(seed, "target").standard_normal(shape)
