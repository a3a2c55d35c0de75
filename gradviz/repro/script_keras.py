"""The Keras Layer part of a TensorFlow reproduction script (after script_tf's): the layer built
as gradviz's TF backend builds it (Python's random seeded, made and built under the run's dtype
as its keras' floatx, the default mode's build with the custom gradients removed), its weights
named by attribute path as backends/keras_names.py names them, the trainable ones set to the
run's seeded values and the frozen ones to the run's."""

KERAS = '''
import random
import re


def keras_of(cls):
    """The keras package the Layer comes from (Keras 3 `keras`, Keras 2 `tf_keras`)."""
    for klass in cls.__mro__:
        root = klass.__module__.split(".")[0]
        if klass.__name__ == "Layer" and root in ("keras", "tf_keras"):
            return importlib.import_module(root)
    raise TypeError(f"{cls} is no Keras Layer")


@contextlib.contextmanager
def floatx(dtype, keras):
    if hasattr(keras, "config") and hasattr(keras.config, "set_dtype_policy"):   # Keras 3
        get = (keras.config.floatx, keras.config.dtype_policy)
        put = (keras.config.set_floatx, keras.config.set_dtype_policy)
    else:                                                                        # Keras 2
        get = (keras.backend.floatx, keras.mixed_precision.global_policy)
        put = (keras.backend.set_floatx, keras.mixed_precision.set_global_policy)
    old = [g() for g in get]
    for p in put:
        p(dtype)
    try:
        yield
    finally:
        for p, value in zip(put, old):
            p(value)


def named_variables(layer, variables):
    """`variables` by attribute path (`scale`, `dense.kernel`, `blocks.0.kernel`); an explicit
    name= replaces the last part; one no attribute reaches keeps its Keras path."""
    wanted, found = {id(v): v for v in variables}, {}

    def walk(obj, prefix, seen):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        items = list(vars(obj).items()) if hasattr(obj, "__dict__") else []
        for public in (True, False):
            for attr, val in items:
                if attr.startswith("_") == public:
                    continue
                shown = attr.lstrip("_")
                if public or not isinstance(getattr(type(obj), shown, None), property):
                    shown = attr
                visit(val, prefix + shown, seen, public)

    def visit(val, path, seen, containers):
        if id(val) in wanted:
            found.setdefault(id(val), path)
        elif hasattr(type(val), "trainable_variables") and not isinstance(val, type):
            walk(val, path + ".", seen)
        elif containers and isinstance(val, (list, tuple)):
            for i, item in enumerate(val):
                visit(item, f"{path}.{i}", seen, containers)
        elif containers and isinstance(val, dict):
            for key, item in val.items():
                visit(item, f"{path}.{key}", seen, containers)
    walk(layer, "", set())
    out = {}
    for v in variables:
        name = found.get(id(v))
        short = str(v.name).split("/")[-1].split(":")[0]
        if name is None:
            name = str(getattr(v, "path", None) or v.name)
        elif not re.match(r"^[Vv]ariable(_\\d+)?$", short):   # an explicit name=
            name = name.rpartition(".")[0] + "." + short if "." in name else short
        while name in out:
            name += "_"
        out[name] = v
    return out


def build_layer(op, dtype, params, plain):
    """The Layer as gradviz built it, its trainable weights set to `params` and its frozen ones
    to the run's (FROZEN)."""
    keras = keras_of(op)
    random.seed(SEED)
    with tf.device(DEVICE), floatx(dtype, keras):
        layer = op()
        if not layer.built:
            tensors = {n: tf.constant(v, dtype=dtype if v.dtype.kind == "f" else None)
                       for n, v in LEAVES.items()}
            first = {"op": None, "seed": "a", "mlp": "x", "stack": "x"}[GRAPH]
            args, kwargs = arguments(tensors, first=tensors[first] if first else None)
            with custom_gradients_as_default() if plain else contextlib.nullcontext():
                layer(*args, **kwargs)
    for name, v in named_variables(layer, list(layer.trainable_variables)).items():
        if name in params:
            v.assign(np.asarray(params[name]).astype(v.dtype if isinstance(v.dtype, str)
                                                     else v.dtype.name))
    for name, v in named_variables(layer, list(layer.non_trainable_variables)).items():
        if name in FROZEN:
            v.assign(FROZEN[name].astype(v.dtype if isinstance(v.dtype, str) else v.dtype.name))
    return layer


def layer_call(op, module, mode):
    """(what the graph calls, its trainable weights by name, the scope it runs in)."""
    plain = mode == "default" and not USES_REFERENCE
    layer = build_layer(op, RUN_DTYPE, PARAMS, plain)
    named = named_variables(layer, list(layer.trainable_variables))
    if mode == "custom":
        return layer, named, None
    if USES_REFERENCE:
        reference = reference_of(op, module)
        return (lambda *a, **k: reference(layer, *a, **k)), named, None
    return layer, named, custom_gradients_as_default()
'''
