"""What every check gets: the op as the runner loaded it, its seeded arguments, the run's
settings, and the plain run's gradients (so a check does not pay twice for what the run did)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradviz.backends.checks import draws
from gradviz.backends.graphs import ArgPlan, Graph, _args_from
from gradviz.backends.introspect import where_of
from gradviz.diagnostics import jax_source, source
from gradviz.model import OpInfo, RunSettings
from gradviz.seeds import upstream_values


@dataclass
class CheckContext:
    adapter: Any  # TorchAdapter | TfAdapter | JaxAdapter
    obj: Any  # the user's Function / Module / custom_gradient / Layer
    info: OpInfo
    module: Any  # the user's loaded module
    meta: dict
    plans: list[ArgPlan]
    graph: Graph  # the run's graph (for the precision check)
    settings: RunSettings
    device: str
    seed_params: Any  # seed_params(built): the run's parameter values
    tensors: dict = field(default_factory=dict)  # plain run: name -> {"grads", "value", ...}
    numeric_infos: dict = field(default_factory=dict)  # plain run's numeric reference, if any
    # why a float64 run of the op is no witness of its float32 one ("" when it is): a forward
    # that computes another function in float64, or below float64 whatever its inputs
    float64_unfit: str = ""

    @property
    def framework(self) -> str:
        return self.adapter.name

    def build(self, mode: str = "custom", dtype: str = "", device: str = ""):
        built = self.adapter.build(
            self.obj,
            self.info,
            mode,
            dtype or self.settings.dtype,
            device or self.device,
            self.module,
            self.meta,
            self.plans,
        )
        self.seed_params(built)
        return built

    def tensor_plans(self) -> list[ArgPlan]:
        return [p for p in self.plans if p.kind == "tensor"]

    def arg_values(self, variant: int = 0) -> dict[str, np.ndarray]:
        """The op's tensor arguments; variant k > 0 draws other values from the same range
        (used as further samples of a batch)."""
        out = {}
        for p in self.tensor_plans():
            values = np.asarray(p.values, dtype=np.float64)
            if variant:
                lo, hi = float(values.min(initial=0.0)), float(values.max(initial=1.0))
                values = draws.uniform(
                    (variant, len(out)), min(lo, -1.0), max(hi, 1.0), values.shape
                )
            out[p.name] = values
        return out

    def call_args(self, tensors: dict) -> tuple[list, dict]:
        return _args_from(self.plans, tensors)

    def upstream(self, index: int, shape: tuple[int, ...]) -> np.ndarray:
        name = "out" if index == 0 else f"out{index}"
        return upstream_values(self.settings, name, tuple(shape))

    def tf_grads(self, built, names: list[str], xs) -> list:
        """TF: the gradients of sum(upstream * outputs) of `built` at tensors xs (one per name),
        zeros where a gradient is None; written to be traced by tf.function and vectorized_map."""
        import tensorflow as tf

        xs = list(xs)
        with tf.GradientTape() as tape:
            tape.watch(xs)
            args, kwargs = self.call_args(dict(zip(names, xs)))
            outs = built.call_op(args, kwargs)
            ups = [
                tf.constant(self.upstream(i, tuple(o.shape)), dtype=o.dtype)
                for i, o in enumerate(outs)
            ]
            as_upstreams = upstreams_apply(outs)
            if not as_upstreams:
                loss = tf.add_n([tf.reduce_sum(u * o) for u, o in zip(ups, outs)])
        got = (
            tape.gradient(outs, xs, output_gradients=ups)
            if as_upstreams
            else tape.gradient(loss, xs)
        )
        return [tf.zeros_like(x) if g is None else tf.convert_to_tensor(g) for x, g in zip(xs, got)]

    # --- where to point ------------------------------------------------------------------------
    def backward_where(self) -> str:
        """The `def` line of the user's gradient: a Function's backward, a custom_gradient's
        inner grad function, or that of the first such op a Module / Layer calls; JAX: a
        custom_vjp's bwd or a custom_jvp's jvp, or those of the first rule a Module calls."""
        path = self.info.where.rpartition(":")[0] or self.info.file  # an imported op's own file
        if self.framework == "jax":
            rule = jax_source.op_rule(source.parse(path), self.info.qualname)
            if rule is not None and rule.gradient is not None:
                return source.line_of(path, rule.gradient)
            from gradviz.backends.jax_rules import rule_where  # a rule attached another way

            return rule_where(self.obj, self.info.where)
        node = source.backward_of(
            source.parse(path), self.info.qualname, module=self.info.kind in ("module", "layer")
        )
        if node is not None:
            return source.line_of(path, node)
        fn = getattr(self.obj, "backward", None)
        if fn is not None and self.info.kind == "function":
            return where_of(fn, self.info.where)
        return self.info.where

    def forward_where(self) -> str:
        fn = (
            getattr(self.obj, "forward", None)
            or getattr(self.obj, "call", None)
            or getattr(self.obj, "__wrapped__", None)
        )
        return where_of(fn, self.info.where) if fn is not None else self.info.where


def upstreams_apply(outs) -> bool:
    """TF: whether the gradient of sum(upstream * out) over `outs` may be taken with the
    upstreams as the outputs' gradients (tape.gradient's output_gradients): the same numbers
    (the loss's gradient at each output is its upstream exactly) without taping the loss, a
    third of the TF ops of a call. So where every output is a tensor of one float dtype; else
    the loss, as tf.add_n takes it (or refuses mixed dtypes)."""
    import tensorflow as tf

    return (
        bool(outs)
        and all(isinstance(o, tf.Tensor) and o.dtype == outs[0].dtype for o in outs)
        and outs[0].dtype.is_floating
    )
