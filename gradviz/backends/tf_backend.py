"""TensorFlow / Keras 3: find custom_gradient functions and Layers, build per mode,
differentiate with a GradientTape. Worker-only."""

from __future__ import annotations

import contextlib
import inspect
import random
import sys

import numpy as np
import tensorflow as tf

from gradviz.backends import tf_devices
from gradviz.backends.adapter import AdapterBase, BuiltBase
from gradviz.backends.first_build import FirstBuild
from gradviz.backends.graphs import differentiable, leaf_array
from gradviz.backends.introspect import OpOutputError, OverrideKept
from gradviz.backends.keras_names import named_frozen, named_variables
from gradviz.backends.tf_arrays import (
    HostArrays,
    host_array,
)
from gradviz.backends.tf_batch_eval import batch_evaluator
from gradviz.backends.tf_grad_returns import grad_returns_checked
from gradviz.backends.tf_layer_build import DTYPES, build_layer, floatx, keras_switches
from gradviz.backends.tf_numeric_kit import F, NumericKit, RunF, _watchable
from gradviz.backends.tf_op_kinds import _classify, _user_function, keras_of
from gradviz.backends.tf_overrides import (
    custom_gradients_as_default,
    kept_message,
    take_kept,
)
from gradviz.backends.tf_random_draws import same_random_draws
from gradviz.backends.tf_tape_reads import host_float, own_dtype, probe_grads
from gradviz.model import FROZEN

_NO_PATH = (
    "TensorFlow returned None: no gradient path (an op without a registered gradient such "
    "as tf.round, tf.stop_gradient, or a detour through numpy)"
)
# a weight with no gradient in a Layer's custom run: the usual cause is a custom_gradient that
# cuts it (the weight went in as a tensor, not an argument or a variable read inside)
_NO_PATH_WEIGHT = (
    "TensorFlow returned None: no gradient reaches this weight. Through a "
    "@tf.custom_gradient a weight gets only what grad returns for it: its entry "
    "in the variables= list (None there gives none), or its input gradient when "
    "it is passed as an argument; one captured as a tensor "
    "(tf.convert_to_tensor(self.w) outside the function) gets none"
)
_FROZEN = (
    f"{FROZEN} (its layer is trainable=False): kept at the value the layer built, not "
    "seeded, not perturbed by the numeric reference"
)
_LAYER_DEFAULT_ARGS = ("training", "mask")


def _dense_tensor(t) -> bool:
    """Whether an op's output is a tensor gradviz differentiates. tf.is_tensor is also true of
    a RaggedTensor or SparseTensor: their shapes have None in them, and the run failed far from
    the user's code ("int() argument must be ... not 'NoneType'")."""
    if isinstance(t, (tf.RaggedTensor, tf.SparseTensor, tf.IndexedSlices)):
        kind = type(t).__name__
        dense = {
            "RaggedTensor": "out.to_tensor() or out.flat_values",
            "SparseTensor": "tf.sparse.to_dense(out)",
        }.get(kind, "tf.convert_to_tensor(out)")
        raise OpOutputError(
            f"the op returned a tf.{kind}; gradviz differentiates dense tensors "
            f"only: return {dense} instead (or also, from a wrapper op)"
        )
    return tf.is_tensor(t)


class Built(BuiltBase):
    """One op ready to call in one mode; a Layer's variables by attribute path (keras_names)."""

    is_tensor = staticmethod(_dense_tensor)

    def __init__(self, call, layer=None, patch=None, custom=False):
        # only trainable weights are seeded, differentiated and perturbed; a frozen layer's
        # are shown with "no gradient: frozen" (DESIGN.md "Parameters")
        super().__init__(
            call,
            named_variables(layer) if layer is not None else {},
            patch,
            frozen=named_frozen(layer) if layer is not None else {},
        )
        self.layer = layer
        self.custom = custom  # the custom mode (no patch, no reference)
        # the default mode without a user reference: no custom gradient may remain in its graph
        self.check_overrides = patch is custom_gradients_as_default

    def param_shape(self, name):
        return tuple(int(s) for s in self._params[name].shape)

    def get_param(self, name):
        return np.asarray(self._params[name].numpy(), dtype=np.float64)

    def set_param(self, name, values):
        v = self._params[name]
        v.assign(np.asarray(values).astype(v.dtype if isinstance(v.dtype, str) else v.dtype.name))


class TfAdapter(AdapterBase):
    name = "tf"

    def __init__(self):
        # the non-trainable weights of a request's first Layer build, by request (its plans)
        self._fixed = FirstBuild()

    # Process-wide settings a file may change at import; each file keeps its own (user_state):
    # floatx and dtype policy of each keras loaded (Keras 3 and/or Keras 2), TF's eager switch.
    def settings(self) -> tuple:
        kerases = tuple(
            (name, tuple(g() for g in keras_switches(sys.modules[name])[0]))
            for name in ("keras", "tf_keras")
            if name in sys.modules
        )
        return (kerases, tf.config.functions_run_eagerly())

    def apply_settings(self, settings: tuple) -> None:
        kerases, eager = settings
        for name, values in kerases:
            for put, value in zip(keras_switches(sys.modules[name])[1], values):
                put(value)
        tf.config.run_functions_eagerly(eager)

    def seed_random(self, seed: int) -> None:
        """The same random stream for every mode (see the torch adapter): Python's, from which
        Keras 3 seeds a layer's SeedGenerator at its build. TF's global seed is set again right
        before each forward (differentiate)."""
        random.seed(seed)

    def version(self) -> str:
        return str(tf.__version__)

    # --- devices -------------------------------------------------------------------------------
    devices = staticmethod(tf_devices.devices)
    resolve_device = staticmethod(tf_devices.resolve_device)

    # --- finding ops (the walk is AdapterBase.find_ops) --------------------------------------
    classify = staticmethod(_classify)

    def defining(self, obj, kind: str):
        return _user_function(obj) if kind == "custom_gradient" else obj

    def forward_params(self, obj, info_or_kind) -> list[inspect.Parameter]:
        params = self.declared_params(obj, info_or_kind)
        if getattr(info_or_kind, "kind", info_or_kind) == "custom_gradient":
            return params
        return [
            p for p in params if not (p.name in _LAYER_DEFAULT_ARGS and p.default is not p.empty)
        ]

    def declared_params(self, obj, info_or_kind) -> list[inspect.Parameter]:
        """Every argument of the forward as written (a call's `training` too), without self."""
        if getattr(info_or_kind, "kind", info_or_kind) == "custom_gradient":
            return list(inspect.signature(_user_function(obj)).parameters.values())
        return list(inspect.signature(obj.call).parameters.values())[1:]

    # --- modes ---------------------------------------------------------------------------------
    def build(self, obj, info, mode, dtype, device, module, meta, plans) -> Built:
        reference = meta.get("reference")
        if info.kind == "custom_gradient":
            if mode == "custom":
                return Built(obj)
            if reference is not None:
                return Built(reference)
            return Built(obj, patch=custom_gradients_as_default)
        with tf.device(device), floatx(dtype, keras_of(obj)):
            layer = obj()
        plain = mode != "custom" and reference is None  # the default mode, overrides removed
        if not layer.built:
            # a default build calls what the default run will (tf.function twins): a Layer whose
            # call is a tf.function is then traced once per default run, not twice
            with custom_gradients_as_default() if plain else contextlib.nullcontext():
                build_layer(layer, plans, dtype, device)
        self._same_fixed_weights(layer, plans)
        if mode == "custom":
            return Built(layer, layer, custom=True)
        if reference is not None:
            return Built(lambda *a, **k: reference(layer, *a, **k), layer)
        return Built(layer, layer, custom_gradients_as_default)

    def _same_fixed_weights(self, layer, plans) -> None:
        """Non-trainable weights (a frozen sublayer's, a buffer drawn by a random initializer, a
        sublayer's moving statistics, a Dropout's seed state) keep what the request's first
        build made of them (first_build): custom, default and numeric run one forward."""
        variables = list(layer.non_trainable_variables)
        kept = self._fixed.values(
            plans,
            [tuple(v.shape) for v in variables],
            lambda: [np.array(v.numpy()) for v in variables],
        )
        for v, a in zip(variables, kept or ()):
            v.assign(a.astype(v.dtype if isinstance(v.dtype, str) else v.dtype.name))

    def differentiate(self, graph, built, dtype, device, probe=None) -> dict:
        tdtype = DTYPES[dtype]
        recorded: dict[str, tuple] = {}

        inputs: set[int] = set()

        def rec(name, t, role):
            if id(t) in inputs:
                # an output that is an input tensor itself (a forward returning x as it is, the
                # default mode of a custom_gradient's `return (x, 2 * x), grad`): the gradient
                # of that tensor was the input's whole gradient (1 + 2), not the loss's through
                # this output (1), and a correct op read `differs`
                t = tf.identity(t)
            recorded[name] = (t, role)
            return t

        arrays = graph.prepared.setdefault("tf", HostArrays())
        with tf.device(device):
            fixed = [leaf.name for leaf in graph.leaves if not differentiable(leaf.values)]
            # int64 / bool inputs keep their dtype and are not watched (DESIGN.md "Op modules")
            leaves = {
                leaf.name: tf.constant(leaf.values)
                if leaf.name in fixed
                else arrays.tensor(leaf.values, tdtype, device)
                for leaf in graph.leaves
            }
            inputs.update(id(t) for t in leaves.values())
            take_kept()
            # the same draws of TF's global random ops (tf.random.uniform, no op seed) in every
            # mode: custom and default of a random forward otherwise compared different forwards
            # (GV201 blamed an override that was not there). The numeric pass does not reseed
            # between its forwards: it finds such a forward not repeatable (numeric.py).
            same_random_draws()
            # one window for the forward and its gradient: a grad function that runs forward
            # code again (tf.recompute_grad) must get the same functions
            with built.window():
                with tf.GradientTape(persistent=True) as tape:
                    for n, t in leaves.items():
                        if n not in fixed:
                            tape.watch(t)
                    loss = graph.forward(leaves, built.call_op, rec, RunF(arrays))
                kept = take_kept() if built.check_overrides else []
                targets = [
                    (n, t, leaf.role)
                    for leaf, (n, t) in zip(graph.leaves, leaves.items())
                    if n not in fixed
                ]
                targets += [(n, v, "param") for n, v in built.params().items()]
                targets += [(n, t, role) for n, (t, role) in recorded.items()]
                if not kept:
                    # no user grad runs in a default run (its forward ran plain or its graph was
                    # reported kept above), so the profile hook that checks their returns (~0.25
                    # ms a gradient) has nothing to find there
                    checked = (
                        contextlib.nullcontext()
                        if built.check_overrides
                        else grad_returns_checked()
                    )
                    with checked:
                        grads = tape.gradient(loss, [_watchable(t) for _, t, _ in targets])
                    kept = take_kept() if built.check_overrides else []
                probes, skipped = (
                    probe_grads(tape, recorded, targets, probe) if probe and not kept else ({}, "")
                )
            del tape
            if kept:
                raise OverrideKept(kept_message(kept))
        got = {}
        for (name, t, role), g in zip(targets, grads):
            why = _NO_PATH_WEIGHT if role == "param" and built.custom else _NO_PATH
            if isinstance(g, tf.IndexedSlices):
                g = tf.convert_to_tensor(g)
            got[name] = {
                "role": role,
                "value": host_float(t),
                "grad": None if g is None else host_float(g),
                "why": "" if g is not None else why,
                "probe": probes.get(name),
                "grad_dtype": own_dtype(g, t),
            }
            if skipped and role in ("input", "param"):
                got[name]["probe_skipped"] = skipped
        for name, v in built.frozen.items():
            got[name] = {
                "role": "param",
                "value": host_float(v),
                "grad": None,
                "why": _FROZEN,
                "frozen": True,
            }
        for name in fixed:
            got[name] = {
                "role": "input",
                "value": host_array(leaves[name]),
                "grad": None,
                "why": "",
            }
        return got

    def numeric_kit(self, device) -> NumericKit:
        return NumericKit(device)

    def evaluate(self, graph, built, leaves: dict, inject: dict, device) -> float:
        def rec(name, t, role):
            if name in inject:
                return t + tf.constant(inject[name], dtype=t.dtype)
            return t

        with tf.device(device):
            tensors = {n: tf.constant(leaf_array(v)) for n, v in leaves.items()}
            return float(graph.forward(tensors, built.call_op, rec, F))

    def batch_evaluator(self, graph, built, device, base_leaves: dict, shapes: dict):
        return batch_evaluator(graph, built, device, base_leaves, shapes)


def adapter() -> TfAdapter:
    # Start TensorFlow's runtime now, before any user file is imported: a file that hides every
    # device (tf.config.set_visible_devices([], ...)) then fails at its own line, instead of
    # leaving a process in which no other file's op can run.
    tf.config.list_logical_devices()
    return TfAdapter()
