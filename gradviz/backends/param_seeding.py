"""The values a run gives an op's trainable parameters: the same in every framework and mode."""

from __future__ import annotations

import numpy as np

from gradviz.backends.graphs import param_values
from gradviz.backends.op_metadata import MetadataMismatch, meta_where, unfit_parameters


def seed_params(built, seed: int, meta: dict, graph=None) -> None:
    """The trainable parameters only (built.param_names()); frozen ones and buffers keep the
    values the module built (DESIGN.md "Parameters")."""
    explicit = meta.get("inputs") or {}
    renamed = built.avoid_names(graph.owns) if graph is not None else {}
    if explicit and graph is not None and graph.check_params:
        names = [renamed.get(n, n) for n in [*built.param_names(), *built.frozen]]
        unfit = unfit_parameters(explicit, graph.args, names)
        if unfit:
            raise MetadataMismatch(unfit, meta_where(meta, ""))
    for name in built.param_names():
        shape = built.param_shape(name)
        spec = explicit.get(renamed.get(name, name))
        if spec is not None and not isinstance(spec, tuple):
            values = np.broadcast_to(np.asarray(spec, dtype=np.float64), shape)
        else:
            values = param_values(seed, name, shape)
        built.set_param(name, values)
