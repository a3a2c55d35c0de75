"""A Keras layer's trainable variables named by attribute path, as torch names a Module's
parameters, so both modes and both frameworks seed and compare the same values. Worker-only."""

from __future__ import annotations

import re

_AUTO_NAME = re.compile(r"^[Vv]ariable(_\d+)?$")


def named_variables(layer) -> dict:
    """Trainable variables by attribute path (`scale`, `dense.kernel`, `blocks.0.kernel`), as
    torch's named_parameters() names them: stable across builds, unlike Keras's auto names
    (`variable_1`), so both modes and both frameworks seed and compare the same values.
    A variable reachable by no attribute keeps its Keras path, made unique."""
    return _named(layer, list(layer.trainable_variables))


def named_frozen(layer) -> dict:
    """Frozen weights, named as named_variables names them: weights made trainable whose layer
    (or an outer one) was set `trainable = False`, as torch's requires_grad=False parameters
    are. Weights made non-trainable (moving statistics, a seed state) are the layer's buffers,
    as torch's register_buffer ones: not shown. Keras 3 marks a frozen layer's variables
    non-trainable too; each layer's own list of the weights it made trainable tells them apart
    (Keras 2 leaves the variables' flag as it was)."""
    trainable = {id(v) for v in layer.trainable_variables}
    made = {id(v): v for v in _made_trainable(layer)}
    return _named(
        layer,
        [v for v in layer.non_trainable_variables if id(v) in made and id(v) not in trainable],
    )


def _made_trainable(layer) -> list:
    flatten = getattr(layer, "_flatten_layers", None)
    if flatten is None:
        return [v for v in layer.non_trainable_variables if getattr(v, "trainable", False)]
    out = []
    for sub in flatten(include_self=True, recursive=True):
        own = getattr(sub, "_trainable_variables", None)  # Keras 3
        if own is None:
            own = getattr(sub, "_trainable_weights", [])  # Keras 2 (tf_keras)
        out += list(own)
    return out


def _named(layer, variables: list) -> dict:
    wanted = {id(v): v for v in variables}
    found: dict[int, str] = {}
    _walk_attributes(layer, "", wanted, found, set())
    out: dict = {}
    for v in variables:
        name = found.get(id(v))
        short = str(v.name).split("/")[-1].split(":")[0]
        if name is None:
            name = str(getattr(v, "path", None) or v.name)
        elif not _AUTO_NAME.match(short):  # an explicit name= is the user's choice of name
            name = name.rpartition(".")[0] + "." + short if "." in name else short
        while name in out:
            name += "_"
        out[name] = v
    return out


def _walk_attributes(obj, prefix: str, wanted: dict, found: dict, seen: set) -> None:
    if id(obj) in seen:
        return
    seen.add(id(obj))
    items = list(vars(obj).items()) if hasattr(obj, "__dict__") else []
    # public attributes first: Keras keeps its own lists under `_...` names set before the user's
    for public in (True, False):
        for attr, val in items:
            if attr.startswith("_") == public:
                continue
            # Keras 3 keeps Dense's weight as `_kernel` behind a `kernel` property: the public name
            shown = attr.lstrip("_")
            if public or not isinstance(getattr(type(obj), shown, None), property):
                shown = attr
            _visit(val, prefix + shown, wanted, found, seen, containers=public)


def _visit(val, path: str, wanted: dict, found: dict, seen: set, containers: bool) -> None:
    if id(val) in wanted:
        found.setdefault(id(val), path)
    elif hasattr(type(val), "trainable_variables") and not isinstance(val, type):
        _walk_attributes(val, path + ".", wanted, found, seen)
    elif containers and isinstance(val, (list, tuple)):
        for i, item in enumerate(val):
            _visit(item, f"{path}.{i}", wanted, found, seen, containers)
    elif containers and isinstance(val, dict):
        for key, item in val.items():
            _visit(item, f"{path}.{key}", wanted, found, seen, containers)
