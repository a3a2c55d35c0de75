"""The JAX part of a reproduction script: the custom and default modes as gradviz's JAX backend
runs them (jax.vjp of the graph's loss, each recorded tensor's gradient read through a zero tap
added to it; the default with every custom_vjp / custom_jvp / equinox filter_custom_vjp called
as its primal under jax.disable_jit, a rule left in the traced jaxpr leaving default out, as
jax_rules does), flax / equinox Modules built and named as jax_modules builds and names them,
and the float64 loss of the custom forward (jax_enable_x64 on) that the numeric part
differentiates."""

JAX = '''
import contextlib
import random

import jax
import jax.numpy as jnp

FRAMEWORK = "jax"
_built64 = {}
_RULE_PRIMITIVES = ("custom_vjp_call", "custom_jvp_call", "custom_lin")


class K:
    """The graphs' array functions (gradviz's JAX F)."""
    total = staticmethod(jnp.sum)
    mean = staticmethod(jnp.mean)

    @staticmethod
    def weighted_sum(w, t):
        return jnp.sum(w * t)

    @staticmethod
    def dense(x, w, b):
        return jnp.tensordot(x, w, axes=[[x.ndim - 1], [0]]) + b

    @staticmethod
    def const(arr, like):
        return jnp.asarray(np.asarray(arr), dtype=like.dtype)


def device():
    if DEVICE.startswith("cuda:"):
        return jax.devices("gpu")[int(DEVICE.split(":", 1)[1])]
    return jax.devices("cpu")[0]


def precision(dtype):
    """float64 work with jax_enable_x64 on; a float32 run keeps the op file's own setting."""
    return jax.enable_x64(True) if dtype == "float64" else contextlib.nullcontext()


def _is_filter_vjp(obj):
    eqx = sys.modules.get("equinox")
    return eqx is not None and isinstance(obj, getattr(eqx, "filter_custom_vjp", ()))


def primal(op):
    """The function the rule is attached to: what the default mode differentiates."""
    return op.fn if _is_filter_vjp(op) else getattr(op, "fun", op)


@contextlib.contextmanager
def rules_as_default():
    """Within: every custom_vjp / custom_jvp (and equinox filter_custom_vjp) runs its primal,
    jit off, so no trace made with a rule earlier is reused."""
    calls = {jax.custom_vjp: lambda self, *a, **k: self.fun(*a, **k),
             jax.custom_jvp: lambda self, *a, **k: self.fun(*a, **k)}
    eqx = sys.modules.get("equinox")
    if eqx is not None and hasattr(eqx, "filter_custom_vjp"):
        calls[eqx.filter_custom_vjp] = lambda self, *a, **k: self.fn(*a, **k)
    saved = {cls: cls.__dict__["__call__"] for cls in calls}
    for cls, call in calls.items():
        cls.__call__ = call
    try:
        with jax.disable_jit():
            yield
    finally:
        for cls, call in saved.items():
            cls.__call__ = call


def kept_rules(closed):
    """The custom rules still in a traced jaxpr (its sub-jaxprs included)."""
    found = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name in _RULE_PRIMITIVES:
                found.append(str(eqn.params.get("name", eqn.primitive.name)))
            for v in eqn.params.values():
                for sub in v if isinstance(v, (tuple, list)) else (v,):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        walk(inner)
    walk(closed.jaxpr)
    return found


def module_kind(cls):
    for package in ("flax.nnx", "flax.linen", "equinox"):
        base = getattr(sys.modules.get(package), "Module", None)
        if base is not None and isinstance(cls, type) and issubclass(cls, base) and cls is not base:
            return package
    raise TypeError(f"{cls} is no flax.nnx, flax.linen or equinox Module")


def _key_name(key):
    for attr in ("key", "name", "idx"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(key)


def named(tree, is_param=lambda x: True):
    """({attribute path: array leaf}, the flat leaves, the treedef, path -> leaf index)."""
    flat, treedef = jax.tree_util.tree_flatten_with_path(tree)
    out, index = {}, {}
    for i, (path, leaf) in enumerate(flat):
        keys = [_key_name(k) for k in path]
        if len(keys) > 1 and keys[-1] == "value":   # an nnx Variable's array
            keys = keys[:-1]
        if isinstance(leaf, jax.Array) and is_param(leaf):
            out[".".join(keys)] = leaf
            index[".".join(keys)] = i
    return out, [leaf for _, leaf in flat], treedef, index


def rebuilder(leaves, treedef, index):
    def rebuild(params):
        new = list(leaves)
        for name, value in params.items():
            new[index[name]] = value
        return jax.tree_util.tree_unflatten(treedef, new)
    return rebuild


def build(op, dtype):
    """The Module as gradviz built it (a fresh build, Python's and numpy's random seeded):
    (call(params, *args, **kwargs), bound(params): the Module holding them, its frozen state)."""
    random.seed(SEED)
    np.random.seed(SEED % (1 << 32))
    kind = module_kind(op)
    if kind == "flax.nnx":
        from flax import nnx
        graphdef, state, rest = nnx.split(op(), nnx.Param, ...)
        rebuild = rebuilder(*named(state)[1:])

        def bound(p):
            return nnx.merge(graphdef, rebuild(p), rest)
        return (lambda p, *a, **k: bound(p)(*a, **k)), bound, named(rest)[0]
    if kind == "flax.linen":
        # init on the graph's tensors: every variable it makes is replaced (parameters by
        # PARAMS; the rest is checked against the run's, FROZEN), so only their shapes count
        module = op()
        tensors = {n: jnp.asarray(v, dtype=dtype) if v.dtype.kind == "f" else jnp.asarray(v)
                   for n, v in LEAVES.items()}
        first = {"op": None, "seed": "a", "mlp": "x", "stack": "x"}[GRAPH]
        args, kwargs = arguments(tensors, first=tensors[first] if first else None)
        variables = module.init(jax.random.PRNGKey(0), *args, **kwargs)
        rest = {k: v for k, v in variables.items() if k != "params"}
        rebuild = rebuilder(*named(variables.get("params", {}))[1:])
        frozen = {f"{k}.{n}": v for k, tree in rest.items() for n, v in named(tree)[0].items()}
        return ((lambda p, *a, **k: module.apply({"params": rebuild(p), **rest}, *a, **k)),
                (lambda p: module.bind({"params": rebuild(p), **rest})), frozen)
    import equinox as eqx
    rebuild = rebuilder(*named(op(), eqx.is_inexact_array)[1:])
    return (lambda p, *a, **k: rebuild(p)(*a, **k)), rebuild, {}


def same_frozen(frozen):
    """The frozen state this build made is the run's (FROZEN): else this is another forward."""
    for n, v in frozen.items():
        if n in FROZEN and not np.array_equal(np.asarray(v), FROZEN[n]):
            raise SystemExit(f"the Module built other values of its frozen {n} than gradviz's "
                             "run did: this script cannot reproduce that run")


def mode_call(op, module, mode):
    """(what the graph calls, as call(params, *args) for a Module, else call(*args); the
    Module's trainable parameters or None; the scope each call of the op runs in)."""
    if KIND != "module":
        if mode == "custom":
            return op, None, contextlib.nullcontext
        if USES_REFERENCE:
            return reference_of(op, module), None, contextlib.nullcontext
        return primal(op), None, rules_as_default
    call, bound, frozen = build(op, getattr(jnp, RUN_DTYPE))
    same_frozen(frozen)
    params = {n: jnp.asarray(v) for n, v in PARAMS.items()}
    if mode == "custom":
        return call, params, contextlib.nullcontext
    if USES_REFERENCE:
        reference = reference_of(op, module)
        return (lambda p, *a, **k: reference(bound(p), *a, **k)), params, contextlib.nullcontext
    return call, params, rules_as_default


def leaves_of(dtype, leaves):
    return {n: jnp.asarray(v, dtype=dtype) if v.dtype.kind == "f" else jnp.asarray(v)
            for n, v in leaves.items()}


def is_output(name):
    """A recorded tensor of role output (the op graph records only its outputs)."""
    return GRAPH == "op" or name == {"seed": "b", "mlp": "out", "stack": f"o{DEPTH}"}[GRAPH]


def leaves_call(fn, params, scope):
    """The op called in its scope, its output as the list of its array leaves (a pytree's in
    JAX's order), a Module's with `params`."""
    def call(*a, **k):
        with scope():
            raw = fn(params, *a, **k) if params is not None else fn(*a, **k)
        return [x for x in jax.tree_util.tree_leaves(raw) if isinstance(x, jax.Array)]
    return call


def gradients(mode):
    """Every tensor's gradient of the loss in `mode`, as numpy (None where there is none)."""
    op, module = load_op()
    with jax.default_device(device()), precision(RUN_DTYPE):
        fn, params, scope = mode_call(op, module, mode)
        leaves = leaves_of(getattr(jnp, RUN_DTYPE), LEAVES)
        xs = {n: t for n, t in leaves.items() if LEAVES[n].dtype.kind == "f"}

        def forward(xs, ps, taps):
            values, outs = {}, {}

            def rec(name, t):
                if name in taps:
                    t = t + taps[name]
                values[name] = t
                if is_output(name) and name in taps:
                    outs[name] = t
                return t
            loss = graph_loss(leaves_call(fn, ps if params is not None else None, scope),
                              {**leaves, **xs}, rec, K)
            return (loss, outs), values

        closed, (_, recorded) = jax.make_jaxpr(forward, return_shape=True)(xs, params or {}, {})
        kept = kept_rules(closed) if mode == "default" and not USES_REFERENCE else []
        if kept:
            print(f"default: the custom rule of {', '.join(sorted(set(kept)))} stayed in the "
                  "traced graph (as in gradviz's run), so JAX's own derivative is not known")
            return {}
        taps = {n: jnp.zeros(s.shape, s.dtype) for n, s in recorded.items()
                if jnp.issubdtype(s.dtype, jnp.inexact)}
        (loss, outs), pull, _ = jax.vjp(forward, xs, params or {}, taps, has_aux=True)
        gx, gp, gt = pull((jnp.ones_like(loss), {n: jnp.zeros_like(o) for n, o in outs.items()}))
        return {n: np.asarray(g) for n, g in {**gx, **gp, **gt}.items() if g is not None}


def loss64(leaves, params, inject=None):
    """The float64 loss of the custom forward at `leaves` (a Module's trainable parameters at
    `params`), with inject = (name, delta) added to that recorded tensor."""
    op, _ = load_op()

    def rec(name, t):
        if inject is not None and name == inject[0]:
            return t + jnp.asarray(inject[1], dtype=t.dtype)
        return t
    with jax.default_device(device()), jax.enable_x64(True):
        tensors = leaves_of(jnp.float64, leaves)
        if KIND != "module":
            return float(graph_loss(leaves_call(op, None, contextlib.nullcontext), tensors, rec, K))
        if "module" not in _built64:
            _built64["module"] = build(op, jnp.float64)[0]
        ps = leaves_of(jnp.float64, {n: np.asarray(v) for n, v in params.items()})
        return float(graph_loss(leaves_call(_built64["module"], ps, contextlib.nullcontext),
                                tensors, rec, K))
'''
